/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protected flows. Each flow's Rust half (rust/flow.rs: identity and table
 * links, engine, stores, lock, timer, counters) is reached only through the
 * crem_rs_flow_* calls, which take the locks they need; the netns's table
 * (by key, Flow ID, address pair, HELLO nonce) is Rust's (rust/flows.rs,
 * rust/table.rs), which the dumps, the collector and teardown walk too.
 * Rust makes a flow's two halves, sets it up and inserts it (rust/flow.rs,
 * rust/create.rs, the spare pool in rust/pool.rs); this half removes them.
 *
 * Locking: the table is read under RCU (hooks, socket, timers run in softirq).
 * Removal runs under crem_flows.lock (BH-safe), so that removers are
 * ordered with the walks that remove; insertion (rust/create.rs) under the
 * creation lock, which orders it with the netns's closing. The Rust
 * table's own lock nests inside both and
 * inside a flow's lock (a Flow ID learnt), never the other way round. Removal unlinks
 * a flow under crem_flows.lock (crem_rs_flow_unlink, after which nothing
 * hashes it again), waits an RCU grace period for the readers that found it
 * before, then kills its Rust half (crem_rs_flow_kill: engine ended, marked
 * dead, timer cancelled) and frees it.
 */
#ifndef CREM_FLOW_H
#define CREM_FLOW_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/rculist.h>
#include "crem_glue.h"
#include "crem_engine.h"

/* crem_flow.gc_close of a flow the collector keeps (else a CREM_CLOSE_*). */
#define CREM_GC_KEEP (-2)

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

struct crem_flow {
	struct list_head kill; /* private list of a teardown */
	struct rcu_head rcu;
	struct crem_net *cn;
	/* Copies of its Rust half's identity, for the netlink messages. */
	struct crem_flow_key key;
	__be32 peer;
	s8 gc_close; /* the collector's choice (crem_gc.c): CREM_GC_KEEP, or the
		      * CLOSE reason its removal sends (only it writes this,
		      * after set-up, rust/create.rs) */
	s8 close_with; /* the CLOSE reason its removal sends (CREM_CLOSE_*):
			* set under flows.lock by whoever unlinks it */
	u64 created_ns;
	struct crem_rs_flow *rs; /* its Rust half (rust/flow.rs) */
};

void crem_flows_init(struct crem_flows *t);
void crem_flows_exit(struct crem_net *cn);
void crem_flows_dev_gone(struct crem_net *cn, const struct net_device *dev);
void crem_flow_info(struct crem_flow *f, struct crem_flow_info *fi);
void crem_flows_retire(struct crem_net *cn, const u64 *c);
struct crem_flow *crem_flow_lookup(struct crem_net *cn, const struct crem_flow_key *k);
struct netlink_ext_ack;
int crem_flow_add(struct crem_net *cn, const struct crem_flow_key *k, bool fixed, u8 fk, u8 fm,
		  struct netlink_ext_ack *extack);

/* The flow collector (crem_gc.c). */
void crem_gc_start(struct crem_net *cn);
void crem_gc_work(struct work_struct *w);

/*
 * Removal, in process context: under flows.lock, crem_flow_remove() unlinks
 * a flow onto a private list (crem_flow.kill) with the CLOSE reason its
 * engine is to end with (close_with); then crem_flows_reap() waits for readers, notifies
 * flow-down (@notify), ends each engine and frees. Each engine ends with a
 * CLOSE of the reason its remover set in close_with (flow-del: normal
 * termination; the collector: flow ended, or parameter synchronization
 * failed for a HELLO never answered), or none (CREM_CLOSE_NONE: a flow
 * already closed, or teardown, when the socket is already gone). Held
 * packets are released either way.
 */
void crem_flow_remove(struct crem_flows *t, struct crem_flow *f, struct list_head *gone, s8 close);
void crem_flows_reap(struct crem_net *cn, struct list_head *gone, bool notify);

/*
 * flow-up/flow-down notifications (crem_nl_flow.c): the message is allocated
 * ahead (NULL: no listener, or no memory: counted), then filled and
 * multicast without sleeping, so under RCU.
 */
struct sk_buff *crem_nl_flow_ntf_alloc(struct crem_net *cn, gfp_t gfp);
void crem_nl_flow_ntf_send(struct crem_net *cn, struct sk_buff *msg, struct crem_flow *f, u8 cmd);
void crem_nl_flow_event_send(struct crem_net *cn, struct sk_buff *msg, struct crem_flow *f,
			     u8 ev, u16 reason);

/*
 * flow-change events (crem_events.c): the engines mark them on the flow
 * (rust/host.rs, under its lock) and call crem_glue_flow_event; a work item
 * sends them.
 */
void crem_ev_work(struct work_struct *w);

#endif

