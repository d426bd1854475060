/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protected flows as the netlink handlers see them. A flow is Rust's
 * (rust/flow.rs: identity and table links, engine, stores, lock, timer,
 * counters), and so are the netns's table (rust/flows.rs, rust/table.rs),
 * creation (rust/create.rs), removal (rust/removal.rs), the collector
 * (rust/collector.rs) and the flow-change work (rust/events.rs). C holds a
 * flow as an opaque struct crem_rs_flow, which the crem_rs_flow_* calls
 * take; crem_rs_flow_info reports its identity, state and counters.
 *
 * Locking: the table is read under RCU; a flow found there stays alive
 * until the section ends (removal frees it a grace period after it was
 * unlinked).
 */
#ifndef CREM_FLOW_H
#define CREM_FLOW_H

#include <linux/types.h>
#include <linux/skbuff.h>
#include "crem_glue.h"
#include "crem_engine.h"

/*
 * What a flow is made for: its key and peer, and what its first packet (or
 * the HELLO that asked for it) shows of the path, the start of its
 * template (rust/flow.rs sets it up from this and the netns configuration).
 */
struct crem_flow_request {
	struct crem_flow_key key;
	__be32 peer;
	__be16 peer_port; /* the CREM port the peer sends from (its HELLO's), 0: ours */
	u8 tos, ttl;
	__be16 sport;
	u32 link_mtu; /* of the first packet's device, 0 if none */
	bool fixed; /* flow-new with k and m: no adaptive policy */
	u8 k, m;
};

/* The flow of @k, under RCU (crem_nl_flow.c). */
struct crem_rs_flow *crem_flow_lookup(struct crem_net *cn, const struct crem_flow_key *k);
struct netlink_ext_ack;
/* flow-new: the operator's sender flow for @k (crem_nl_flow.c). */
int crem_flow_add(struct crem_net *cn, const struct crem_flow_key *k, bool fixed, u8 fk, u8 fm,
		  struct netlink_ext_ack *extack);

/* What a flow notification reports (crem_nl_flow_notify). */
enum crem_ntf {
	CREM_NTF_UP,
	CREM_NTF_DOWN,
	CREM_NTF_CHANGE, /* with a flow-change event */
};

/*
 * Flow notifications (crem_nl_flow.c), for rust/events.rs: the message is
 * allocated ahead (NULL: no listener, or no memory: counted), then filled
 * with @f's state and multicast without sleeping (so under RCU); @ev: the
 * CREM_FLOW_EVENT_* of a CREM_NTF_CHANGE (@reason: its close reason), else
 * -1. @msg is taken: sent, or freed.
 */
struct sk_buff *crem_nl_flow_ntf_alloc(struct crem_net *cn, gfp_t gfp);
void crem_nl_flow_notify(struct crem_net *cn, struct sk_buff *msg, struct crem_rs_flow *f,
			 enum crem_ntf kind, int ev, u16 reason);

#endif
