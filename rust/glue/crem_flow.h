/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a flow is made from (rust/create.rs). A flow is Rust's
 * (rust/flow.rs), and so are the netns's table, creation, removal, the
 * collector, the flow-change work and the netlink handlers that report
 * flows (rust/netlink/).
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

#endif
