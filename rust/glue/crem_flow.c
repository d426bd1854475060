// SPDX-License-Identifier: GPL-2.0
/*
 * A netns's flows (the table that finds them is Rust's, rust/flows.rs):
 * the hook's way to them, their creation (deferred to process context:
 * engines are too large for atomic allocations) and teardown; the socket's
 * datagrams (rust/dispatch.rs routes them). See crem_flow.h for the
 * locking rules.
 */
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ip.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include <linux/etherdevice.h>
#include <linux/netfilter_bridge.h>
#include <linux/rtnetlink.h>
#include <net/gso.h>
#include "crem_flow.h"
#include "crem_engine.h"

/* Most creation requests queued at once (each holds a small copy). */
#define CREM_MAX_PENDING 64

struct crem_create {
	struct list_head node;
	struct crem_flow_request rq;
	u32 msg_len; /* CRF: the HELLO that asked for it */
	u8 msg[];
};

static bool crem_key_eq(const struct crem_flow_key *a, const struct crem_flow_key *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr && a->dqp == b->dqp &&
	       a->side == b->side && a->kind == b->kind;
}

/* The flow of @k (under RCU): the Rust table's (rust/flows.rs). */
struct crem_flow *crem_flow_lookup(struct crem_net *cn, const struct crem_flow_key *k)
{
	return crem_rs_flows_lookup(cn->rs, k->saddr, k->daddr, k->dqp, k->side, k->kind);
}

static inline u64 crem_now(void)
{
	return ktime_get_ns();
}

/* ---- Callbacks from the engines (under the flow's lock, BH off). ---- */

#ifdef CREM_TEST_BUILD
/*
 * Fault injection for the end-to-end tests, in the test build only (the
 * KUnit variant, CREM_KUNIT=1): corrupt one symbol octet of every Nth coded
 * (scheme 1) REPAIR this node sends, after encoding and before the UDP
 * checksum, as a corrupting middlebox would. 0: off.
 */
static unsigned int fault_corrupt_repair;
module_param(fault_corrupt_repair, uint, 0644);
MODULE_PARM_DESC(fault_corrupt_repair, "test only: corrupt every Nth coded REPAIR sent (0 = never)");

#define CREM_REPAIR_SYMBOL_MIN 24 /* header with one bitmap word */

/* A corrupted copy of @msg, or NULL to send it as it is. */
static u8 *crem_fault_corrupt(const u8 *msg, u32 len)
{
	static atomic_t n;
	unsigned int every = READ_ONCE(fault_corrupt_repair);
	u8 *copy;

	if (!every || len <= CREM_REPAIR_SYMBOL_MIN + 64 || msg[0] != 0x11 || msg[9] != 1 ||
	    atomic_inc_return(&n) % every)
		return NULL;
	/* The engine's buffer is borrowed (read-only to us): corrupt our own. */
	copy = kmemdup(msg, len, GFP_ATOMIC);
	if (copy)
		copy[len - 40] ^= 0x5a;
	return copy;
}
#else
static inline u8 *crem_fault_corrupt(const u8 *msg, u32 len)
{
	return NULL;
}
#endif

int crem_glue_send(struct crem_flow *f, u8 tos, u8 slot, struct sk_buff_head *defer,
		   const u8 *msg, u32 len)
{
	u8 *bad = crem_fault_corrupt(msg, len);
	int err;

	if (unlikely(bad))
		msg = bad;
	err = defer ? crem_sock_queue(defer, f->peer, tos, slot, msg, len) :
		      crem_sock_send(f->cn, f->peer, tos, slot, msg, len);
	kfree(bad);
	return err;
}

/* The netns's budget for what a flow's stores keep (rust/store.rs). */
bool crem_glue_mem_charge(struct crem_flow *f, u32 n)
{
	struct crem_net *cn = f->cn;

	if (atomic64_add_return(n, &cn->flows.mem) > READ_ONCE(cn->cfg.max_memory)) {
		atomic64_sub(n, &cn->flows.mem);
		atomic64_inc(&cn->dp[CREM_DROP_MEMORY]);
		return false;
	}
	return true;
}

void crem_glue_mem_uncharge(struct crem_flow *f, u32 n)
{
	atomic64_sub(n, &f->cn->flows.mem);
}

/* ---- Creation. ---- */

/*
 * Sets up @f (from crem_rs_flow_alloc or the pool) for @rq's flow: its engine
 * from @rq and the netns configuration (rust/flow.rs). No sleeping: also at
 * a flow's first packet, with a spare from the pool.
 */
static int crem_flow_setup(struct crem_net *cn, struct crem_flow *f,
			   const struct crem_flow_request *rq)
{
	f->cn = cn;
	f->key = rq->key;
	f->peer = rq->peer;
	f->gc_close = CREM_GC_KEEP; /* a flow made between its two passes stays */
	f->created_ns = crem_now();
	return crem_rs_flow_setup(f->rs, cn->rs, rq, READ_ONCE(cn->cfg.max_memory) / 4);
}

/*
 * Lists @f and starts it: a CSF sends HELLO, a CRF answers the HELLO
 * @msg. Returns @f, or NULL if it was not wanted (freed). Any context.
 */
static struct crem_flow *crem_flow_insert(struct crem_net *cn, struct crem_flow *f,
					  const u8 *msg, u32 msg_len, gfp_t gfp)
{
	struct crem_flows *t = &cn->flows;
	struct sk_buff *ntf = crem_nl_flow_ntf_alloc(cn, gfp);
	/* A sender flow's HELLO_ACK finds it by its HELLO's nonce. */
	u64 nonce = f->key.side == CREM_SIDE_CSF ? get_random_u64() : 0;

	/* Once listed, a flow-del may take @f: it frees it after this section. */
	rcu_read_lock();
	spin_lock_bh(&t->lock);
	if (t->closing || crem_rs_flow_insert(f->rs, READ_ONCE(cn->cfg.max_flows), nonce)) {
		spin_unlock_bh(&t->lock);
		rcu_read_unlock();
		consume_skb(ntf); /* unused notification: not a drop */
		crem_rs_flow_free(f);
		return NULL;
	}
	spin_unlock_bh(&t->lock);
	atomic64_inc(&cn->dp[CREM_EV_FLOW_UP]);
	crem_gc_start(cn);

	/* A CSF sends its HELLO; a CRF answers the HELLO that asked for it. */
	crem_rs_flow_start(f->rs, nonce, msg, msg_len);
	/* Sent before a flow-down of @f can be (that one waits for us). */
	crem_nl_flow_ntf_send(cn, ntf, f, CREM_CMD_FLOW_UP);
	rcu_read_unlock();
	return f;
}

static void crem_create_one(struct crem_net *cn, struct crem_create *rq)
{
	struct crem_flow *f = crem_rs_flow_alloc(cn->rs, rq->rq.key.side);

	if (!f || crem_flow_setup(cn, f, &rq->rq)) {
		if (f)
			crem_rs_flow_free(f);
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_ALLOC]);
		return;
	}
	crem_flow_insert(cn, f, rq->msg, rq->msg_len, GFP_KERNEL);
}

static void crem_create_work(struct work_struct *w)
{
	struct crem_net *cn = container_of(w, struct crem_net, flows.create_work);
	struct crem_flows *t = &cn->flows;
	struct crem_create *rq;

	for (;;) {
		spin_lock_bh(&t->lock);
		rq = list_first_entry_or_null(&t->pending, struct crem_create, node);
		if (rq) {
			list_del(&rq->node);
			t->n_pending--;
		}
		spin_unlock_bh(&t->lock);
		if (!rq)
			return;
		crem_create_one(cn, rq);
		kfree(rq);
		cond_resched();
	}
}

/*
 * From softirq: the flow of @k, created now from a spare (its HELLO, or
 * its HELLO_ACK to @msg, leaves at once: ahead of the packet that asked
 * for it). Without a spare, a work item creates it and packets pass
 * unprotected meanwhile: NULL. @tos and @ttl start its template: of its
 * first packet, or for a receiver flow of the HELLO (which carries the
 * protected flow's DSCP: its HELLO_ACK leaves with it).
 */
static struct crem_flow *crem_request_flow(struct crem_net *cn, const struct crem_flow_key *k,
					   __be32 peer, u8 tos, u8 ttl, __be16 sport,
					   u32 link_mtu, const u8 *msg, u32 msg_len)
{
	struct crem_flows *t = &cn->flows;
	struct crem_flow_request req = {
		.key = *k,
		.peer = peer,
		.tos = tos,
		.ttl = ttl,
		.sport = sport,
		.link_mtu = link_mtu,
	};
	struct crem_create *rq, *q;
	struct crem_flow *f;

	if (crem_rs_flows_count(cn->rs, k->side) >= READ_ONCE(cn->cfg.max_flows)) {
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_LIMIT]);
		return NULL;
	}
	f = crem_rs_pool_take(cn->rs, k->side);
	if (f) {
		if (!crem_flow_setup(cn, f, &req))
			return crem_flow_insert(cn, f, msg, msg_len, GFP_ATOMIC);
		crem_rs_flow_free(f);
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_ALLOC]);
		return NULL;
	}
	/* The work item needs its own copy of the request and the HELLO. */
	rq = kmalloc(sizeof(*rq) + msg_len, GFP_ATOMIC);
	if (!rq) {
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_ALLOC]);
		return NULL;
	}
	rq->rq = req;
	rq->msg_len = msg_len;
	if (msg_len)
		memcpy(rq->msg, msg, msg_len);
	spin_lock(&t->lock);
	list_for_each_entry(q, &t->pending, node) {
		if (crem_key_eq(&q->rq.key, k))
			goto drop; /* already asked for */
	}
	if (t->closing || t->n_pending >= CREM_MAX_PENDING) {
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_LIMIT]);
		goto drop;
	}
	list_add_tail(&rq->node, &t->pending);
	t->n_pending++;
	/* Queued under the lock that closing is set under (crem_flows_exit). */
	schedule_work(&t->create_work);
	spin_unlock(&t->lock);
	return NULL;
drop:
	spin_unlock(&t->lock);
	kfree(rq);
	return NULL;
}

static __be32 crem_peer_for(struct crem_net *cn, __be32 a);

/*
 * flow-new: the operator's sender flow for @k, set up ahead of its traffic
 * (process context). @fixed: it keeps @fk and @fm, no adaptive policy.
 */
int crem_flow_add(struct crem_net *cn, const struct crem_flow_key *k, bool fixed, u8 fk, u8 fm,
		  struct netlink_ext_ack *extack)
{
	struct crem_flow_request req = { .key = *k, .ttl = 64, .fixed = fixed, .k = fk, .m = fm };
	struct crem_flow *f;
	bool taken;

	if (READ_ONCE(cn->cfg.role) == CREM_ROLE_DISABLED || !rcu_access_pointer(cn->sock)) {
		NL_SET_ERR_MSG(extack, "CREM is not running in this netns: set port and role first");
		return -ENOTCONN;
	}
	req.peer = crem_peer_for(cn, k->daddr);
	if (!req.peer) {
		NL_SET_ERR_MSG_FMT(extack, "no peer is configured for the destination %pI4 (set peer PREFIX=ADDR)",
				   &k->daddr);
		return -EHOSTUNREACH;
	}
	rcu_read_lock();
	taken = crem_flow_lookup(cn, k);
	rcu_read_unlock();
	if (taken) {
		NL_SET_ERR_MSG(extack, "a sender flow for these addresses, dest-qp and kind exists");
		return -EEXIST;
	}
	if (crem_rs_flows_count(cn->rs, CREM_SIDE_CSF) >= READ_ONCE(cn->cfg.max_flows)) {
		NL_SET_ERR_MSG_FMT(extack, "max-flows (%u) sender flows are set up already",
				   READ_ONCE(cn->cfg.max_flows));
		return -ENOSPC;
	}
	f = crem_rs_flow_alloc(cn->rs, CREM_SIDE_CSF);
	if (!f) {
		atomic64_inc(&cn->dp[CREM_DROP_FLOW_ALLOC]);
		return -ENOMEM;
	}
	if (crem_flow_setup(cn, f, &req)) {
		crem_rs_flow_free(f);
		NL_SET_ERR_MSG(extack, "the engine refused the flow's parameters (k, m or the netns defaults)");
		return -EINVAL;
	}
	if (!crem_flow_insert(cn, f, NULL, 0, GFP_KERNEL)) {
		NL_SET_ERR_MSG(extack, "the flow was set up meanwhile (by its traffic), or max-flows was reached, or CREM is stopping");
		return -EBUSY;
	}
	return 0;
}

/* ---- The datapath. ---- */

/* The peer protecting traffic to (or from) @a, or 0 (rust/config.rs: no lock). */
static __be32 crem_peer_for(struct crem_net *cn, __be32 a)
{
	return (__force __be32)crem_rs_peer_for(cn->rs, (__force u32)a);
}

/* The flow kind @ri's packet is a source of, or -1 if it is none. */
static int crem_src_kind(const struct crem_roce_info *ri)
{
	if (ri->is_source)
		return CREM_KIND_REQUESTS;
	return ri->is_response ? CREM_KIND_RESPONSES : -1;
}

/* What @skb shows of its flow's path: its restored packets' template fields. */
static void crem_seen(struct crem_template *t, const struct sk_buff *skb, const struct iphdr *iph,
		      __be16 sport)
{
	memset(t, 0, sizeof(*t));
	if (skb->dev)
		t->ifindex = skb->dev->ifindex;
	if (skb_mac_header_was_set(skb) && skb_mac_header_len(skb) >= ETH_HLEN)
		ether_addr_copy(t->h_source, eth_hdr(skb)->h_source);
	t->mark = skb->mark;
	t->tos = iph->tos;
	t->ttl = iph->ttl;
	t->frag_off = iph->frag_off;
	t->sport = sport;
}

/* The packet travels toward a peer: the CSF of its flow codes it. */
static void crem_csf_packet(struct crem_net *cn, struct sk_buff *skb, const struct iphdr *iph,
			    __be16 sport, u32 len, u32 off,
			    const struct crem_roce_info *ri, __be32 peer, struct sk_buff_head *defer)
{
	int kind = crem_src_kind(ri);
	struct crem_flow_key k = { iph->saddr, iph->daddr, ri->dqp, CREM_SIDE_CSF, kind };
	struct crem_template seen;
	struct crem_flow *f;

	if (kind < 0)
		return;
	f = crem_flow_lookup(cn, &k);
	if (!f)
		f = crem_request_flow(cn, &k, peer, iph->tos, iph->ttl, sport,
				      skb->dev ? READ_ONCE(skb->dev->mtu) : 0, NULL, 0);
	if (!f)
		return;
	crem_seen(&seen, skb, iph, sport);
	crem_rs_flow_csf_source(f->rs, &seen, ri->psn, skb, off, len, defer);
}

/* The packet arrives from a peer: the CRF of its flow may hold it. */
static unsigned int crem_crf_packet(struct crem_net *cn, struct sk_buff *skb,
				    const struct iphdr *iph, __be16 sport, u32 len, u32 off,
				    const struct crem_roce_info *ri)
{
	int kind = crem_src_kind(ri);
	struct crem_flow_key k = { iph->saddr, iph->daddr, ri->dqp, CREM_SIDE_CRF, kind };
	bool ce = INET_ECN_is_ce(iph->tos);
	struct crem_template seen;
	struct crem_flow *f;

	if (kind < 0)
		return NF_ACCEPT;
	f = crem_flow_lookup(cn, &k);
	if (!f)
		return NF_ACCEPT;
	crem_seen(&seen, skb, iph, sport);
	/* Held for in-order release: stolen. */
	return crem_rs_flow_crf_source(f->rs, &seen, ri->psn, skb, off, len, ce) ? NF_STOLEN :
										   NF_ACCEPT;
}

/*
 * br_netfilter hands bridged IPv4 to the FORWARD hook with a fake rtable
 * (no output function): a held packet could never be released, a restored
 * one has no route. CREM protects routed traffic; bridged packets pass
 * unprotected, counted.
 */
static bool crem_bridged(struct crem_net *cn, const struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_BRIDGE_NETFILTER)
	if (nf_bridge_info_exists(skb)) {
		atomic64_inc(&cn->dp[CREM_SKIP_BRIDGED]);
		return true;
	}
#endif
	return false;
}

/*
 * Which side of the datapath @hook is in this netns's role (false: none).
 * Gateway: packets crossing the FORWARD hook, toward a peer's prefix (CSF)
 * or from one (CRF). Host: this host's rxe traffic, leaving at LOCAL_OUT
 * (CSF) and arriving at LOCAL_IN (CRF).
 */
static bool crem_hook_dir(struct crem_net *cn, u32 hook, bool *out, bool *in)
{
	switch (READ_ONCE(cn->cfg.role)) {
	case CREM_ROLE_GATEWAY:
		*out = *in = hook == CREM_HOOK_FORWARD;
		break;
	case CREM_ROLE_HOST:
		*out = hook == CREM_HOOK_LOCAL_OUT;
		*in = hook == CREM_HOOK_LOCAL_IN;
		break;
	default:
		*out = *in = false;
	}
	return *out || *in;
}

static unsigned int __crem_flow_roce(struct crem_net *cn, u32 hook, struct sk_buff *skb,
				     u32 l4off, struct sk_buff_head *defer)
{
	struct crem_roce_info ri;
	const struct iphdr *iph;
	const struct udphdr *uh;
	__be32 peer;
	u32 off, len;
	const u8 *p;
	bool out, in;

	if (!crem_hook_dir(cn, hook, &out, &in) || skb->protocol != htons(ETH_P_IP) ||
	    !rcu_access_pointer(cn->sock))
		return NF_ACCEPT;
	/* The IPv4 header is linear at every hook: the peer first, so that
	 * traffic we do not protect is never linearised. */
	iph = ip_hdr(skb);
	peer = out ? crem_peer_for(cn, iph->daddr) : 0;
	if (!peer && !(in && crem_peer_for(cn, iph->saddr)))
		return NF_ACCEPT;
	if (crem_bridged(cn, skb))
		return NF_ACCEPT;
	/* Engines read the packet as one buffer. */
	if (skb_linearize(skb)) {
		atomic64_inc(&cn->dp[CREM_DROP_LINEARIZE]);
		return NF_ACCEPT;
	}
	iph = ip_hdr(skb);
	uh = (const struct udphdr *)(skb->data + l4off);
	off = l4off + sizeof(*uh);
	if (ntohs(uh->len) < sizeof(*uh) || off + ntohs(uh->len) - sizeof(*uh) > skb->len)
		return NF_ACCEPT;
	len = ntohs(uh->len) - sizeof(*uh);
	p = skb->data + off;
	if (crem_rs_roce_info(p, len, &ri))
		return NF_ACCEPT;

	if (peer) {
		crem_csf_packet(cn, skb, iph, uh->source, len, off, &ri, peer, defer);
		return NF_ACCEPT;
	}
	if (ri.is_ack)
		crem_rs_flows_reverse(cn->rs, iph->saddr, iph->daddr, p, len);
	return crem_crf_packet(cn, skb, iph, uh->source, len, off, &ri);
}

static unsigned int crem_flow_roce_gso(struct crem_net *cn, u32 hook, struct sk_buff *skb,
				       u32 l4off, const struct nf_hook_state *state);

/*
 * LOCAL_OUT runs in process context for packets the host sends (rxe's
 * requester), the other hooks in softirq: the datapath's spinlocks are
 * taken BH-safe by running it with BH disabled everywhere.
 *
 * The source that closes a block must leave before the block's repairs:
 * sent first, a repair would make the block decodable at the CRF one
 * packet early, which restores the source spuriously and then delivers it
 * twice. So the CSF's messages wait until the packet has gone on its way
 * (our hooks are the last of their chain, so okfn skips no other hook).
 */
unsigned int crem_flow_roce(struct crem_net *cn, u32 hook, struct sk_buff *skb, u32 l4off,
			    const struct nf_hook_state *state)
{
	struct sk_buff_head defer;
	unsigned int verdict;

	if (unlikely(skb_is_gso(skb)))
		return crem_flow_roce_gso(cn, hook, skb, l4off, state);
	__skb_queue_head_init(&defer);
	local_bh_disable();
	verdict = __crem_flow_roce(cn, hook, skb, l4off, &defer);
	local_bh_enable();
	if (likely(skb_queue_empty(&defer)))
		return verdict;
	if (verdict == NF_ACCEPT) {
		state->okfn(state->net, state->sk, skb);
		verdict = NF_STOLEN;
	}
	crem_sock_flush(cn, &defer);
	return verdict;
}

/*
 * A GSO skb (UDP GRO on a forwarding path: rx-udp-gro-forwarding, or a
 * local sender's UDP GSO) carries several RoCEv2 packets behind one header:
 * coded or held as one, its packets would be neither protected nor
 * released one by one. Split it as nf_queue does and give each segment the
 * path of a single packet; the aggregate is consumed. Aggregates of paths
 * we do not protect go on untouched.
 */
static unsigned int crem_flow_roce_gso(struct crem_net *cn, u32 hook, struct sk_buff *skb,
				       u32 l4off, const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct sk_buff *segs, *seg, *next;
	bool out, in, ours;

	if (!crem_hook_dir(cn, hook, &out, &in) || skb->protocol != htons(ETH_P_IP))
		return NF_ACCEPT;
	ours = (out && crem_peer_for(cn, iph->daddr)) || (in && crem_peer_for(cn, iph->saddr));
	if (!ours)
		return NF_ACCEPT;
	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		atomic64_inc(&cn->dp[CREM_DROP_GSO]);
		return NF_ACCEPT;
	}
	atomic64_inc(&cn->dp[CREM_EV_GSO_SEGMENTED]);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		switch (crem_flow_roce(cn, hook, seg, l4off, state)) {
		case NF_ACCEPT:
			state->okfn(state->net, state->sk, seg);
			break;
		case NF_STOLEN:
			break;
		default:
			kfree_skb_reason(seg, SKB_DROP_REASON_NETFILTER_DROP);
		}
	}
	consume_skb(skb);
	return NF_STOLEN;
}

/*
 * A datagram of the CREM socket (rust/dispatch.rs routes it to its flow):
 * counted by type and by what became of it; a HELLO for a receiver flow we
 * have not got asks for one, which answers it.
 */
void crem_flow_msg(struct crem_net *cn, __be32 from, const u8 *msg, u32 len, u8 tos)
{
	struct crem_msg_info mi = {};
	int v = crem_rs_sock_msg(cn->rs, from, msg, len, INET_ECN_is_ce(tos), &mi);

	/* Every datagram is counted by type, valid or not, from anyone. */
	atomic64_inc(&cn->msg_in[mi.slot]);
	switch (v) {
	case CREM_MSG_FED:
		break;
	case CREM_MSG_REPORT_FED:
		atomic64_inc(&cn->dp[CREM_EV_PATH_REPORT]);
		break;
	case CREM_MSG_NEW_FLOW: {
		struct crem_flow_key k = { mi.saddr, mi.daddr, mi.dqp, CREM_SIDE_CRF, mi.kind };

		crem_request_flow(cn, &k, from, tos, 64, 0, 0, msg, len);
		break;
	}
	case CREM_MSG_NOT_PEER:
		atomic64_inc(&cn->dp[CREM_DROP_MSG_PEER]);
		break;
	case CREM_MSG_NO_FLOW:
		atomic64_inc(&cn->dp[CREM_DROP_MSG_NO_FLOW]);
		break;
	default:
		atomic64_inc(&cn->dp[CREM_DROP_MSG_INVALID]);
	}
}

/* ---- Teardown. ---- */

static void crem_flow_unlink(struct crem_flows *t, struct crem_flow *f)
{
	lockdep_assert_held(&t->lock);
	/* Every remover found @f in the table under t->lock: still there. */
	WARN_ON_ONCE(!crem_rs_flow_unlink(f->rs));
}

/* Counters a flow's owner no longer reports go on counting in the netns totals. */
void crem_flows_retire(struct crem_net *cn, const u64 *c)
{
	int i;

	spin_lock_bh(&cn->flows.lock);
	for (i = 0; i < CREM_FS_N; i++)
		cn->flows.retired[i] += c[i];
	spin_unlock_bh(&cn->flows.lock);
}

/*
 * Releases everything a flow holds (no reader can reach it any more). Its
 * last counters (its CLOSE included) are read in the section that marks it
 * dead, so a concurrent flow-reset counts them once.
 */
static void crem_flow_kill(struct crem_flow *f)
{
	struct crem_flow_info *fi = kmalloc(sizeof(*fi), GFP_KERNEL);

	crem_rs_flow_kill(f->rs, f->close_with, fi);
	if (fi)
		crem_flows_retire(f->cn, fi->counters);
	kfree(fi);
}

void crem_flows_reap(struct crem_net *cn, struct list_head *gone, bool notify)
{
	struct crem_flow *f, *n;

	if (list_empty(gone))
		return;
	synchronize_net(); /* no hook, socket, dump or creation finds them any more */
	list_for_each_entry_safe(f, n, gone, kill) {
		if (notify) /* its last state, before the engine ends */
			crem_nl_flow_ntf_send(cn, crem_nl_flow_ntf_alloc(cn, GFP_KERNEL), f,
					      CREM_CMD_FLOW_DOWN);
		crem_flow_kill(f);
		crem_rs_flow_free(f);
		atomic64_inc(&cn->dp[CREM_EV_FLOW_DOWN]);
	}
}

void crem_flow_remove(struct crem_flows *t, struct crem_flow *f, struct list_head *gone, s8 close)
{
	crem_flow_unlink(t, f);
	f->close_with = close;
	list_add(&f->kill, gone);
}

/* A removal walk (under flows.lock): where the flows removed go. */
struct crem_flush {
	struct crem_flows *t;
	struct list_head *gone;
};

static bool crem_flush_one(struct crem_flow *f, void *arg)
{
	struct crem_flush *r = arg;

	crem_flow_remove(r->t, f, r->gone, CREM_CLOSE_NONE);
	return false;
}

/* @notify: flow-down for each (not while the netns is dismantled). */
static void __crem_flows_flush(struct crem_net *cn, bool notify)
{
	struct crem_flows *t = &cn->flows;
	LIST_HEAD(gone);
	struct crem_flush r = { t, &gone };

	spin_lock_bh(&t->lock);
	crem_rs_flows_walk(cn->rs, NULL, crem_flush_one, &r);
	spin_unlock_bh(&t->lock);
	crem_flows_reap(cn, &gone, notify);
}

void crem_flows_flush(struct crem_net *cn)
{
	__crem_flows_flush(cn, true);
}

/*
 * NETDEV_UNREGISTER of @dev in @cn's netns (RTNL held): no stored packet
 * keeps a pointer to it (rust/store.rs). Flows already unlinked are
 * killed only after a grace period that this walk holds off.
 */
void crem_flows_dev_gone(struct crem_net *cn, const struct net_device *dev)
{
	ASSERT_RTNL();
	atomic64_add(crem_rs_flows_dev_gone(cn->rs, dev), &cn->dp[CREM_DROP_DEV_GONE]);
}

void crem_flows_init(struct crem_flows *t)
{
	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->pending);
	INIT_WORK(&t->create_work, crem_create_work);
	INIT_DELAYED_WORK(&t->gc_work, crem_gc_work);
	INIT_WORK(&t->ev_work, crem_ev_work);
}

void crem_flows_exit(struct crem_net *cn)
{
	struct crem_flows *t = &cn->flows;
	struct crem_create *rq, *n;

	spin_lock_bh(&t->lock);
	t->closing = true;
	spin_unlock_bh(&t->lock);
	/*
	 * Readers (hooks, socket, timers) that saw the table open may still be
	 * queueing creation or collection work: wait for them before
	 * cancelling, or a work item queued after its cancel would outlive us.
	 * From here on nothing inserts (closing), so nothing queues again. (The
	 * spare pool closes with the Rust state, crem_rs_net_exit.)
	 */
	synchronize_net();
	cancel_work_sync(&t->create_work);
	cancel_delayed_work_sync(&t->gc_work);
	list_for_each_entry_safe(rq, n, &t->pending, node)
		kfree(rq);
	INIT_LIST_HEAD(&t->pending);
	t->n_pending = 0;
	__crem_flows_flush(cn, false);
	/* No flow is left to mark an event. */
	cancel_work_sync(&t->ev_work);
}
