/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types the Rust datapath shares with C (through the module's bindgen):
 * a flow's engine parameters, key, state for netlink (struct
 * crem_flow_info) and restore template, and the codes of its removal and
 * of flow-set.
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

/*
 * CLOSE reasons (crem-draft, "CREM CLOSE Reasons") a removal sends;
 * CREM_CLOSE_NONE: none (the CSF ends silently; the CRF, which releases
 * its held packets in any case, closes as normal termination).
 */
#define CREM_CLOSE_NONE (-1)
#define CREM_CLOSE_NORMAL 0
#define CREM_CLOSE_FLOW_ENDED 1
#define CREM_CLOSE_SYNC_FAILED 2

/* flow-set's outcomes (rust/flow.rs Flow::pin). */
#define CREM_PIN_FAILED 0 /* the engine could not run */
#define CREM_PIN_OK 1
#define CREM_PIN_BUSY 2
#define CREM_PIN_OUTSIDE_LIMITS 3
#define CREM_PIN_NO_SLOT 4
#define CREM_PIN_NOT_ESTABLISHED 5
#define CREM_PIN_NO_POLICY 6
#define CREM_PIN_NOT_SENDER 7 /* a receiver flow: nothing to pin */

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
