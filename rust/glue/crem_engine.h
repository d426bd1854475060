/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the C datapath (flow table, socket, hooks) and a
 * flow's Rust half (rust/flow.rs: its engine and stores, its lock and
 * timer, what it counts; the engine is crem-core's SenderFlow or
 * ReceiverFlow, rust/engine.rs). struct crem_flow is opaque to Rust: it
 * only passes the pointer back; struct crem_rs_flow is opaque to C.
 *
 * crem_rs_* are implemented in Rust, each taking the flow's lock itself
 * (with BH disabled); crem_glue_* in C, called by Rust from inside a
 * crem_rs_* call, i.e. under the flow's lock with BH disabled.
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

/* What crem_rs_sock_msg says of a datagram (the caller's counters). */
struct crem_msg_info {
	u8 slot; /* msgs-by-type slot (< CREM_MSG_SLOTS), set even for an invalid one */
	/* CREM_MSG_NEW_FLOW: the receiver flow its HELLO asks for. */
	u8 family, kind; /* CREM_KIND_* */
	u32 dqp;
	__be32 saddr, daddr;
};

/* What became of a datagram (rust/dispatch.rs). */
enum crem_msg_verdict {
	CREM_MSG_FED, /* handed to its flow */
	CREM_MSG_REPORT_FED, /* a PATH_REPORT, handed to its sender flow */
	CREM_MSG_NEW_FLOW, /* a HELLO of no receiver flow: make it (info's key) */
	CREM_MSG_NOT_PEER, /* from an address that may not send it */
	CREM_MSG_INVALID, /* invalid, or a HELLO of a flow we cannot protect */
	CREM_MSG_NO_FLOW, /* for no flow here */
};

/*
 * Per-flow counters, in the order of the flow-stats attributes
 * (CREM_A_FLOW_STATS_SOURCES onward, append-only): the engine fills the first
 * CREM_FS_ENGINE, the flow the next CREM_FS_DATAPATH (msgs-in, msgs-out,
 * send-failures, store-full, clone-failures, held-dropped, injected,
 * inject-failures: rust/flow.rs), the engine the CREM_FS_LATE appended since.
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
	u64 mem; /* octets its stores keep, charged to max-memory */
	u64 last_ns; /* ktime_get_ns() of its last packet or message */
	u64 counters[CREM_FS_N];
};

struct crem_template;
struct sk_buff;
struct sk_buff_head;
struct net;
struct net_device;
struct crem_rs_flow;

/*
 * CLOSE reasons (crem-draft, "CREM CLOSE Reasons") a removal sends;
 * CREM_CLOSE_NONE: none (the CSF ends silently; the CRF, which releases
 * its held packets in any case, closes as normal termination).
 */
#define CREM_CLOSE_NONE (-1)
#define CREM_CLOSE_NORMAL 0
#define CREM_CLOSE_FLOW_ENDED 1
#define CREM_CLOSE_SYNC_FAILED 2

/* flow-set's outcomes (crem_rs_flow_pin). */
#define CREM_PIN_FAILED 0 /* the engine could not run */
#define CREM_PIN_OK 1
#define CREM_PIN_BUSY 2
#define CREM_PIN_OUTSIDE_LIMITS 3
#define CREM_PIN_NO_SLOT 4
#define CREM_PIN_NOT_ESTABLISHED 5
#define CREM_PIN_NO_POLICY 6

/*
 * A flow (both halves: rust/flow.rs makes them) of @side in the netns whose
 * Rust state is @net, its engine not yet set up, or NULL if out of memory:
 * process context, charged to the netns's memory cgroup, failing there
 * rather than reclaiming hard (a flow that cannot be had passes
 * unprotected, counted). crem_rs_pool_take: the same from softirq, a spare
 * made ahead (rust/pool.rs), or NULL (then one is on its way).
 * crem_rs_flow_free frees either, once no one can reach it.
 */
struct crem_flow *crem_rs_flow_alloc(void *net, u8 side);
struct crem_flow *crem_rs_pool_take(void *net, u8 side);
void crem_rs_flow_free(struct crem_flow *f);
/*
 * Once, before it is inserted (any context): its identity (key and peer of
 * @rq) and table (of @net, the netns's Rust state), its engine from @rq and
 * the netns configuration last committed (crem_rs_config_commit) and
 * @retention_budget (what the CSF may retain: of the netns's memory limit,
 * which C keeps, and clamps from other netns's), its restored packets'
 * template from @rq. 0, or -EINVAL.
 */
struct crem_flow_request;
int crem_rs_flow_setup(struct crem_rs_flow *rf, void *net, const struct crem_flow_request *rq,
		       u64 retention_budget);
/* Listed: the CSF sends HELLO with @nonce; the CRF takes the HELLO @msg. */
void crem_rs_flow_start(struct crem_rs_flow *rf, u64 nonce, const u8 *msg, u32 len);
/*
 * @skb's RoCEv2 UDP payload: @len linear octets at @off of its data; @seen:
 * its template fields (ifindex 0 and a zero h_source: unknown). The CSF's
 * messages wait on @defer until the packet has gone on.
 */
void crem_rs_flow_csf_source(struct crem_rs_flow *rf, const struct crem_template *seen, u32 psn,
			     struct sk_buff *skb, u32 off, u32 len, struct sk_buff_head *defer);
/* As crem_rs_flow_csf_source; true if the flow now holds @skb (NF_STOLEN). */
bool crem_rs_flow_crf_source(struct crem_rs_flow *rf, const struct crem_template *seen, u32 psn,
			     struct sk_buff *skb, u32 off, u32 len, bool ce);
/* flow-set: @pin: pin (k, m); else back to the adaptive policy. CREM_PIN_*. */
int crem_rs_flow_pin(struct crem_rs_flow *rf, u8 k, u8 m, bool pin);
void crem_rs_flow_info(struct crem_rs_flow *rf, struct crem_flow_info *fi);
/* flow-reset: counters since the last reset into @fi, then zeroed; false if gone. */
bool crem_rs_flow_reset(struct crem_rs_flow *rf, struct crem_flow_info *fi);
/*
 * Removal (process context, once the flow is unreachable): ends its engine
 * with a CLOSE of @close_reason if established, its last counters into @fi
 * (unless NULL), marks it dead and cancels its timer.
 */
void crem_rs_flow_kill(struct crem_rs_flow *rf, int close_reason, struct crem_flow_info *fi);
/* One pending flow-change event (CREM_FLOW_EVENT_*) and its @reason, or -1. */
int crem_rs_flow_ev_take(struct crem_rs_flow *rf, u16 *reason);
/*
 * The netns's flow table (rust/flows.rs, rust/table.rs). Insertion and
 * removal run under crem_flows.lock; a flow unlinked is freed a grace
 * period later at the earliest. Lookups run under RCU and return the C
 * half. @net: the netns's Rust state (rust/netns.rs); addresses in network
 * order.
 */
/* 0, -EEXIST (its key is taken), -ENOSPC (@max of its side) or -EINVAL. */
int crem_rs_flow_insert(struct crem_rs_flow *rf, u32 max, u64 nonce);
bool crem_rs_flow_unlink(struct crem_rs_flow *rf);
struct crem_flow *crem_rs_flows_lookup(void *net, __be32 saddr, __be32 daddr, u32 dqp, u8 side,
				       u8 kind);
/* An RDMA ACK from @saddr to @daddr: the sender flows of the reverse pair. */
void crem_rs_flows_reverse(void *net, __be32 saddr, __be32 daddr, const u8 *p, u32 len);
/* The one flow of Flow ID @id (@side unless < 0, @peer unless 0); *@n match. */
struct crem_flow *crem_rs_flows_find_id(void *net, u32 id, int side, __be32 peer, u32 *n);
/*
 * @fn(flow, @arg) for every flow from *@pos on (NULL: the whole table),
 * under RCU (no sleeping), until it returns true: *@pos is then that flow's
 * place, from which a later walk goes on (a dump's next part: a flow
 * inserted meanwhile comes once or not at all, a flow removed before *@pos
 * makes it skip one; both move the generation), else the end. Under
 * crem_flows.lock @fn may remove the flow it is given.
 */
void crem_rs_flows_walk(void *net, u64 *pos, bool (*fn)(struct crem_flow *f, void *arg),
			void *arg);
/* @dev is going (RTNL): no flow's held packet keeps it; returns those dropped. */
u32 crem_rs_flows_dev_gone(void *net, const struct net_device *dev);
/* Flows of @side (both if < 0); the generation (dump consistency). */
u32 crem_rs_flows_count(void *net, int side);
u32 crem_rs_flows_gen(void *net);
int crem_rs_roce_info(const u8 *p, u32 len, struct crem_roce_info *out);
/*
 * The CREM socket's datagram @msg from @from (softirq): checked, decoded,
 * routed and handed to its flow; @ce: it arrived CE-marked. A
 * crem_msg_verdict, with @out's slot (and the key of NEW_FLOW).
 */
int crem_rs_sock_msg(void *net, __be32 from, const u8 *msg, u32 len, bool ce,
		     struct crem_msg_info *out);

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

/*
 * Sends (or queues on @defer, unless NULL) a message of @f with @tos, of
 * msgs-by-type @slot: 0 or an errno.
 */
int crem_glue_send(struct crem_flow *f, u8 tos, u8 slot, struct sk_buff_head *defer,
		   const u8 *msg, u32 len);
/*
 * The netns's memory budget (max-memory) for @n octets a flow's stores keep:
 * false (counted as the netns's drop-memory) if it would be exceeded.
 */
bool crem_glue_mem_charge(struct crem_flow *f, u32 n);
void crem_glue_mem_uncharge(struct crem_flow *f, u32 n);
/* @f marked a flow-change event: the netns's event work sends it. */
void crem_glue_flow_event(struct crem_flow *f);

#endif
