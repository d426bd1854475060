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
/* Then those appended after the msg-types nests (REPAIRS_CE onward): the
 * engine's six (rust/engine.rs FS_TAIL), the stores' two (rust/flow.rs). */
#define CREM_FS_TAIL (CREM_FS_FLAT + 2 * CREM_MSG_SLOTS)
#define CREM_FS_TAIL_N 8
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
 * Making flows (rust/create.rs; @net: the netns's Rust state; the
 * datapath's are Rust's own). flow-new (process context): crem_rs_flow_add
 * makes the sender flow of @rq (its peer the one configured for its
 * destination) now: 0, -EHOSTUNREACH (no peer), -EEXIST (its key is
 * taken), -ENOSPC (max-flows), -ENOMEM, -EINVAL (the engine refused its
 * parameters) or -ESHUTDOWN. crem_rs_flows_close: the netns makes
 * no flow any more (process context, before its last flush).
 * crem_rs_flow_free frees a flow removed from the table, once no one can
 * reach it.
 */
struct crem_flow_request;
int crem_rs_flow_add(void *net, const struct crem_flow_request *rq);
void crem_rs_flows_close(void *net);
void crem_rs_flow_free(struct crem_flow *f);
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
 * The netns's flow table (rust/flows.rs, rust/table.rs). Removal runs
 * under crem_flows.lock; a flow unlinked is freed a grace period later at
 * the earliest. Lookups run under RCU and return the C half. @net: the
 * netns's Rust state (rust/netns.rs); addresses in network order.
 */
bool crem_rs_flow_unlink(struct crem_rs_flow *rf);
struct crem_flow *crem_rs_flows_lookup(void *net, __be32 saddr, __be32 daddr, u32 dqp, u8 side,
				       u8 kind);
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

/* @f marked a flow-change event: the netns's event work sends it. */
void crem_glue_flow_event(struct crem_flow *f);
/*
 * A flow-up notification allocated ahead (NULL: no listener, or no memory:
 * counted); crem_glue_flow_up(@f, @ntf): @f is listed and started (BH
 * off): counted, its netns's collector runs, @ntf (if any) is sent.
 */
struct crem_net;
struct sk_buff *crem_glue_ntf_alloc(struct crem_net *cn, bool may_sleep);
void crem_glue_flow_up(struct crem_flow *f, struct sk_buff *ntf);

#endif
