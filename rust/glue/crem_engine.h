/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the C datapath (flow table, locks, timers, socket)
 * and the Rust engines and their stores (rust/engine.rs, which runs
 * crem-core's SenderFlow/ReceiverFlow; rust/store.rs). struct crem_flow is
 * opaque to Rust: it only passes the pointer back.
 *
 * crem_rs_* are implemented in Rust; crem_glue_* in C, called by Rust from
 * inside a crem_rs_* call, i.e. under flow->lock with BH disabled.
 */
#ifndef CREM_ENGINE_H
#define CREM_ENGINE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include "../../include/uapi/linux/crem.h" /* enum crem_side, crem_role */

struct crem_flow;

/* What the engine of a new flow is built from (config snapshot + flow). */
struct crem_engine_params {
	u8 side, kind, recovery, adaptive, k, m, m_cong;
	u16 symbol_len;
	u32 link_mtu, hold_us, epsilon_ppb, dqp; /* link_mtu: of the first packet's device */
	__be32 saddr, daddr;
	u64 retention_budget, rtt_hint_ns;
};

/* A RoCEv2 UDP payload as the hook needs it. */
struct crem_roce_info {
	u32 psn, dqp;
	u8 is_source, is_ack;
	u8 is_response; /* a source of the responder direction's flow */
};

/* Dispatch fields of a CREM message (HELLO: the flow it describes). */
struct crem_msg_info {
	u8 type, family;
	u8 kind; /* HELLO: CREM_KIND_*, 0xff for a kind we do not protect */
	u32 flow_id, dqp;
	__be32 saddr, daddr;
	u64 nonce; /* HELLO_ACK: echoed nonce */
};

/*
 * Per-flow counters, in the order of the flow-stats attributes
 * (CREM_A_FLOW_STATS_SOURCES onward, append-only): the engine fills the first
 * CREM_FS_ENGINE, the C datapath the next CREM_FS_DATAPATH (struct
 * crem_flow_ctr, same order), the engine the CREM_FS_LATE appended since.
 */
#define CREM_FS_ENGINE 18
#define CREM_FS_DATAPATH 8
#define CREM_FS_LATE 1
/* The flat counters; then msgs-in-by-type and msgs-out-by-type (C, per slot). */
#define CREM_FS_FLAT (CREM_FS_ENGINE + CREM_FS_DATAPATH + CREM_FS_LATE)
#define CREM_MSG_SLOTS 11 /* attributes of the msg-types set after its pad */
/* Then the engine's counters appended after the msg-types nests
 * (CREM_A_FLOW_STATS_REPAIRS_CE onward: rust/engine.rs FS_TAIL). */
#define CREM_FS_TAIL (CREM_FS_FLAT + 2 * CREM_MSG_SLOTS)
#define CREM_FS_TAIL_N 6
#define CREM_FS_N (CREM_FS_TAIL + CREM_FS_TAIL_N)

/*
 * Datapath events the engine cannot see, per flow: the flow-stats attributes
 * after the engine's (CREM_A_FLOW_STATS_MSGS_IN onward), in this order. The
 * socket's (msgs_in, msgs_out, send_fail) and the budget's (store_full) are
 * counted in C, the stores' in Rust, all under the flow's lock.
 */
struct crem_flow_ctr {
	u64 msgs_in, msgs_out, send_fail, store_full, clone_fail, held_dropped,
		injected, inject_fail;
};

/* A flow's state for netlink, in the units of the flow attributes. */
struct crem_flow_info {
	u8 state, config_id, scheme, k, m, loss_class, breaker, pinned, rdma_mtu_exact;
	u16 symbol_len;
	u32 flow_id, srtt_us, min_rtt_us, loss_ppm, rdma_mtu;
	/* Negotiated limits, valid if has_limits. */
	u8 has_limits, schemes, max_k, max_m;
	u16 max_t, max_open_blocks;
	/* Milliseconds since a message from the peer last reached the engine,
	 * valid if heard. */
	u8 heard;
	u64 last_msg_ms;
	u64 counters[CREM_FS_N];
};

struct crem_template;
struct sk_buff;
struct net;
struct net_device;
/*
 * A flow's engine and its packet stores, the engine not yet set up (NULL if
 * out of memory): process context, charged to the active memory cgroup.
 * The stores count into @ctr and send their packets on with @tpl into @net,
 * all of @f, which frees the engine (crem_rs_engine_free) before itself.
 */
void *crem_rs_engine_alloc(struct crem_flow *f, struct crem_flow_ctr *ctr,
			   struct crem_template *tpl, struct net *net, u8 side);
void crem_rs_engine_free(void *eng, u8 side);
int crem_rs_engine_init(void *eng, const struct crem_engine_params *p);
/*
 * CLOSE reasons (crem-draft, "CREM CLOSE Reasons") a removal sends;
 * CREM_CLOSE_NONE: none (the CSF ends silently; the CRF, which releases
 * its held packets in any case, closes as normal termination).
 */
#define CREM_CLOSE_NONE (-1)
#define CREM_CLOSE_NORMAL 0
#define CREM_CLOSE_FLOW_ENDED 1
#define CREM_CLOSE_SYNC_FAILED 2
/* Ends the engine, with a CLOSE of @close_reason if established. */
void crem_rs_engine_fini(void *eng, struct crem_flow *f, u8 side, int close_reason);
void crem_rs_csf_start(void *eng, struct crem_flow *f, u64 now, u64 nonce);
/* @skb's RoCEv2 UDP payload: @len linear octets at @off of its data. */
void crem_rs_csf_source(void *eng, struct crem_flow *f, u64 now, u32 psn, struct sk_buff *skb,
			u32 off, u32 len);
void crem_rs_csf_reverse(void *eng, u64 now, const u8 *p, u32 len);
/* flow-set: @pin: pin (k, m); else back to the adaptive policy. CREM_PIN_*. */
#define CREM_PIN_FAILED 0 /* the engine could not run */
#define CREM_PIN_OK 1
#define CREM_PIN_BUSY 2
#define CREM_PIN_OUTSIDE_LIMITS 3
#define CREM_PIN_NO_SLOT 4
#define CREM_PIN_NOT_ESTABLISHED 5
#define CREM_PIN_NO_POLICY 6
int crem_rs_csf_pin(void *eng, struct crem_flow *f, u64 now, u8 k, u8 m, bool pin);
/* As crem_rs_csf_source; true if the flow now holds @skb (NF_STOLEN). */
bool crem_rs_crf_source(void *eng, struct crem_flow *f, u64 now, u32 psn, struct sk_buff *skb,
			u32 off, u32 len, bool ce);
/* @ce: the datagram carrying @msg arrived CE-marked. */
void crem_rs_engine_msg(void *eng, struct crem_flow *f, u64 now, const u8 *msg, u32 len,
			bool ce, u8 side);
void crem_rs_engine_timer(void *eng, struct crem_flow *f, u64 now, u8 side);
u64 crem_rs_engine_deadline(const void *eng, u8 side); /* U64_MAX: none */
void crem_rs_engine_info(const void *eng, u8 side, struct crem_flow_info *out);
/* @dev is going (RTNL): no stored packet keeps it; returns held ones dropped. */
u32 crem_rs_engine_dev_gone(void *eng, u8 side, const struct net_device *dev);
int crem_rs_roce_info(const u8 *p, u32 len, struct crem_roce_info *out);
int crem_rs_msg_info(const u8 *msg, u32 len, struct crem_msg_info *out);

/*
 * How a flow's restored and held packets go on (rust/inject.rs): the
 * header template of restored packets, from the flow's last packet, and
 * where they enter. Until one is seen (@noted false, a receiver flow set up
 * by its HELLO) the UDP source port is unknown and nothing can be restored.
 */
struct crem_template {
	__be32 saddr, daddr;
	__be16 sport, frag_off;
	u8 tos, ttl;
	bool noted;
	bool host; /* host mode: restored and held packets are delivered locally */
	u32 mark; /* of the last packet (restored packets route by it) */
	int ifindex; /* where the flow's packets arrive (restored ones enter there) */
	u8 h_source[ETH_ALEN]; /* host mode: their link source (restored packets') */
};
/* @skb is the restored packet this CPU is forwarding (our hook lets it by). */
bool crem_rs_inject_own(const struct sk_buff *skb);

void crem_glue_send(struct crem_flow *f, const u8 *msg, u32 len);
/*
 * The netns's memory budget (max-memory) for @n octets a flow's stores keep:
 * false (counted as store-full and drop-memory) if it would be exceeded.
 */
bool crem_glue_mem_charge(struct crem_flow *f, u32 n);
void crem_glue_mem_uncharge(struct crem_flow *f, u32 n);
void crem_glue_flow_set_id(struct crem_flow *f, u32 id);
/* A flow-change event (CREM_FLOW_EVENT_*; @reason for close-received). */
void crem_glue_flow_event(struct crem_flow *f, u8 ev, u16 reason);
bool crem_glue_flow_id_in_use(struct crem_flow *f, u32 id);

#endif
