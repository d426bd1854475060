/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the C netlink handlers (crem_nl.c, crem_nl_flow.c) ask of the Rust
 * datapath: flows (rust/flow.rs: engine, stores, lock, timer, counters;
 * the engine is crem-core's SenderFlow or ReceiverFlow, rust/engine.rs),
 * held by C as an opaque struct crem_rs_flow, and the netns's table.
 * crem_rs_* are implemented in Rust, each taking the locks it needs (with
 * BH disabled).
 */
#ifndef CREM_ENGINE_H
#define CREM_ENGINE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include "../../include/uapi/linux/crem.h" /* enum crem_side, crem_role */

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

/* A flow is one direction of one RC QP: addresses and destination QP. */
/* Flow kinds (crem-core wire::FlowKind): what the flow codes. */
enum {
	CREM_KIND_REQUESTS,	/* requester packets, Flow Kind 1 */
	CREM_KIND_RESPONSES,	/* READ responses, ATOMIC ACKs, Flow Kind 192 */
};

struct crem_flow_key {
	__be32 saddr, daddr; /* IPv4 only in this version */
	u32 dqp;
	u8 side;
	u8 kind; /* both kinds may share addresses and QP: PSN spaces differ */
};

/* A flow's identity and state for netlink, in the units of the flow attributes. */
struct crem_flow_info {
	struct crem_flow_key key;
	__be32 peer;
	u64 age_ms; /* since it was set up */
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
#define CREM_PIN_NOT_SENDER 7 /* a receiver flow: nothing to pin */

/*
 * flow-new (rust/create.rs; @net: the netns's Rust state; process
 * context): crem_rs_flow_add makes the sender flow of @rq (its peer the
 * one configured for its destination) now: 0, -EHOSTUNREACH (no peer),
 * -EEXIST (its key is taken), -ENOSPC (max-flows), -ENOMEM, -EINVAL (the
 * engine refused its parameters) or -ESHUTDOWN.
 */
struct crem_flow_request;
int crem_rs_flow_add(void *net, const struct crem_flow_request *rq);
/* flow-set: @pin: pin (k, m); else back to the adaptive policy. CREM_PIN_*. */
int crem_rs_flow_pin(struct crem_rs_flow *rf, u8 k, u8 m, bool pin);
void crem_rs_flow_info(struct crem_rs_flow *rf, struct crem_flow_info *fi);
/*
 * flow-reset: counters since the last reset into @fi (and into the netns's
 * totals of flows gone), then zeroed; false if gone.
 */
bool crem_rs_flow_reset(struct crem_rs_flow *rf, struct crem_flow_info *fi);
/*
 * flow-del (rust/removal.rs): crem_rs_flow_remove takes @rf, found under
 * RCU (still held), out of the table, its engine to end with a CLOSE of
 * @close (CREM_CLOSE_*): false if another remover took it first.
 * crem_rs_flows_reap (process context) then frees what was removed, a
 * grace period later: flow-down, CLOSE, last counters into the totals.
 */
bool crem_rs_flow_remove(struct crem_rs_flow *rf, int close);
void crem_rs_flows_reap(void *net);
/*
 * The sum of every flow's counters (CREM_FS_N), present and gone, since
 * the last stats-reset; @rebase: the totals restart from here. Process
 * context.
 */
void crem_rs_flows_totals(void *net, u64 *sum, bool rebase);
/*
 * The netns's flow table (rust/flows.rs, rust/table.rs). Lookups run under
 * RCU and return the flow (opaque to C). @net: the netns's Rust state (rust/netns.rs);
 * addresses in network order.
 */
struct crem_rs_flow *crem_rs_flows_lookup(void *net, __be32 saddr, __be32 daddr, u32 dqp, u8 side,
				       u8 kind);
/* The one flow of Flow ID @id (@side unless < 0, @peer unless 0); *@n match. */
struct crem_rs_flow *crem_rs_flows_find_id(void *net, u32 id, int side, __be32 peer, u32 *n);
/*
 * @fn(flow, @arg) for every flow from *@pos on (NULL: the whole table),
 * under RCU (no sleeping), until it returns true: *@pos is then that flow's
 * place, from which a later walk goes on (a dump's next part: a flow
 * inserted meanwhile comes once or not at all, a flow removed before *@pos
 * makes it skip one; both move the generation), else the end.
 */
void crem_rs_flows_walk(void *net, u64 *pos, bool (*fn)(struct crem_rs_flow *f, void *arg),
			void *arg);
/* @dev is going (RTNL): no flow's held packet keeps it (those dropped are counted). */
void crem_rs_flows_dev_gone(void *net, const struct net_device *dev);
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

#endif
