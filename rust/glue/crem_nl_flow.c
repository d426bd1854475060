// SPDX-License-Identifier: GPL-2.0
/*
 * Counters and flows over the "crem" family: per-netns stats (the Rust
 * hook's counters, the datapath's, and the sum of all flows' counters
 * including flows gone since), the flow dump, consistent under churn
 * through the table's generation number (NLM_F_DUMP_INTR when it moved),
 * flow-get/flow-del of one flow and the flow-up/flow-down notifications.
 *
 * Flow IDs are the draft's defence against blind injection: like wg show
 * with keys, they go only to CAP_NET_ADMIN over the netns. The dump omits
 * them for others, flow-get's do (which names a flow by id: an oracle)
 * needs it, and so does joining the events group (GENL_MCAST_CAP_NET_ADMIN).
 */
#include <net/genetlink.h>
#include <net/sock.h>
#include "crem_glue.h"
#include "crem_flow.h"
#include "crem-nl-gen.h"


/* The flow of @k (under RCU): the Rust table's (rust/flows.rs). */
struct crem_rs_flow *crem_flow_lookup(struct crem_net *cn, const struct crem_flow_key *k)
{
	return crem_rs_flows_lookup(cn->rs, k->saddr, k->daddr, k->dqp, k->side, k->kind);
}

/*
 * flow-new: the operator's sender flow for @k, set up ahead of its traffic
 * (process context; rust/create.rs makes it). @fixed: it keeps @fk and @fm,
 * no adaptive policy.
 */
int crem_flow_add(struct crem_net *cn, const struct crem_flow_key *k, bool fixed, u8 fk, u8 fm,
		  struct netlink_ext_ack *extack)
{
	struct crem_flow_request req = { .key = *k, .ttl = 64, .fixed = fixed, .k = fk, .m = fm };
	int err;

	err = crem_rs_flow_add(cn->rs, &req);
	switch (err) {
	case -ENOTCONN:
		NL_SET_ERR_MSG(extack, "CREM is not running in this netns: set port and role first");
		break;
	case 0:
	case -ENOMEM:
		break;
	case -EHOSTUNREACH:
		NL_SET_ERR_MSG_FMT(extack, "no peer is configured for the destination %pI4 (set peer PREFIX=ADDR)",
				   &k->daddr);
		break;
	case -EEXIST:
		NL_SET_ERR_MSG(extack, "a sender flow for these addresses, dest-qp and kind exists");
		break;
	case -ENOSPC:
		NL_SET_ERR_MSG_FMT(extack, "max-flows (%u) sender flows are set up already",
				   READ_ONCE(cn->cfg.max_flows));
		break;
	case -EINVAL:
		NL_SET_ERR_MSG(extack, "the engine refused the flow's parameters (k, m or the netns defaults)");
		break;
	default:
		NL_SET_ERR_MSG(extack, "CREM is stopping in this netns");
	}
	return err;
}

/* A msg-types nest of @c[CREM_MSG_SLOTS] (rust/host.rs msg_slot order). */
static int crem_put_msg_types(struct sk_buff *msg, int type, const u64 *c)
{
	struct nlattr *nest = nla_nest_start(msg, type);
	int i;

	BUILD_BUG_ON(CREM_A_MSG_TYPES_OTHER - CREM_A_MSG_TYPES_REPAIR + 1 != CREM_MSG_SLOTS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CREM_MSG_SLOTS; i++)
		if (nla_put_u64_64bit(msg, CREM_A_MSG_TYPES_REPAIR + i, c[i],
				      CREM_A_MSG_TYPES_PAD))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int crem_put_counters(struct sk_buff *msg, int type, const u64 *c)
{
	struct nlattr *nest = nla_nest_start(msg, type);
	int i;

	BUILD_BUG_ON(CREM_A_FLOW_STATS_SOURCES + CREM_FS_FLAT - 1 !=
		     CREM_A_FLOW_STATS_CODED_RETX_LOST);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CREM_FS_FLAT; i++)
		if (nla_put_u64_64bit(msg, CREM_A_FLOW_STATS_SOURCES + i, c[i],
				      CREM_A_FLOW_STATS_PAD))
			return -EMSGSIZE;
	if (crem_put_msg_types(msg, CREM_A_FLOW_STATS_MSGS_IN_BY_TYPE, &c[CREM_FS_FLAT]) ||
	    crem_put_msg_types(msg, CREM_A_FLOW_STATS_MSGS_OUT_BY_TYPE,
			       &c[CREM_FS_FLAT + CREM_MSG_SLOTS]))
		return -EMSGSIZE;
	BUILD_BUG_ON(CREM_A_FLOW_STATS_REPAIRS_CE + CREM_FS_TAIL_N - 1 != CREM_A_FLOW_STATS_MAX);
	for (i = 0; i < CREM_FS_TAIL_N; i++)
		if (nla_put_u64_64bit(msg, CREM_A_FLOW_STATS_REPAIRS_CE + i, c[CREM_FS_TAIL + i],
				      CREM_A_FLOW_STATS_PAD))
			return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* The netns's msg_in/msg_out, read into @c[2 * CREM_MSG_SLOTS]. */
static void crem_msg_counts(struct crem_net *cn, u64 *c)
{
	int i;

	for (i = 0; i < CREM_MSG_SLOTS; i++) {
		c[i] = atomic64_read(&cn->msg_in[i]);
		c[CREM_MSG_SLOTS + i] = atomic64_read(&cn->msg_out[i]);
	}
}

#define CREM_RS_STATS (CREM_A_STATS_MALFORMED - CREM_A_STATS_ROCE_LOCAL_IN + 1)

int crem_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	u64 vals[CREM_RS_STATS], sum[CREM_FS_N], by_type[2 * CREM_MSG_SLOTS];
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	u32 i, n;

	BUILD_BUG_ON(CREM_A_STATS_DROP_SEND - CREM_A_STATS_FLOWS_CREATED != CREM_DROP_SEND);
	BUILD_BUG_ON(CREM_A_STATS_PATH_REPORTS - CREM_A_STATS_FLOWS_REMOVED !=
		     CREM_EV_PATH_REPORT - CREM_EV_FLOW_DOWN);
	BUILD_BUG_ON(CREM_A_STATS_DROP_DEV_GONE - CREM_A_STATS_GSO_SEGMENTED !=
		     CREM_DROP_DEV_GONE - CREM_EV_GSO_SEGMENTED);
	BUILD_BUG_ON(CREM_DROP_DEV_GONE + 1 != CREM_NR_DP);
	n = crem_rs_stats(cn->rs, vals, CREM_RS_STATS);
	crem_rs_flows_totals(cn->rs, sum, false);
	crem_msg_counts(cn, by_type);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto nospace;
	nest = nla_nest_start(msg, CREM_A_CMD_STATS);
	if (!nest)
		goto nospace;
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_ROCE_LOCAL_IN + i, vals[i],
				      CREM_A_STATS_PAD))
			goto nospace;
	for (i = 0; i <= CREM_DROP_SEND; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_CREATED + i,
				      atomic64_read(&cn->dp[i]), CREM_A_STATS_PAD))
			goto nospace;
	if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_ACTIVE, crem_rs_flows_count(cn->rs, -1),
			      CREM_A_STATS_PAD) ||
	    nla_put_u64_64bit(msg, CREM_A_STATS_MEMORY, atomic64_read(&cn->mem),
			      CREM_A_STATS_PAD) ||
	    crem_put_counters(msg, CREM_A_STATS_TOTALS, sum))
		goto nospace;
	for (i = CREM_EV_FLOW_DOWN; i <= CREM_EV_PATH_REPORT; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_FLOWS_REMOVED + i - CREM_EV_FLOW_DOWN,
				      atomic64_read(&cn->dp[i]), CREM_A_STATS_PAD))
			goto nospace;
	if (crem_put_msg_types(msg, CREM_A_STATS_MSGS_IN_BY_TYPE, by_type) ||
	    crem_put_msg_types(msg, CREM_A_STATS_MSGS_OUT_BY_TYPE, &by_type[CREM_MSG_SLOTS]))
		goto nospace;
	for (i = CREM_EV_GSO_SEGMENTED; i < CREM_NR_DP; i++)
		if (nla_put_u64_64bit(msg, CREM_A_STATS_GSO_SEGMENTED + i - CREM_EV_GSO_SEGMENTED,
				      atomic64_read(&cn->dp[i]), CREM_A_STATS_PAD))
			goto nospace;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

int crem_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	u64 sum[CREM_FS_N];
	int i;

	crem_rs_stats_reset(cn->rs);
	for (i = 0; i < CREM_NR_DP; i++)
		atomic64_set(&cn->dp[i], 0);
	for (i = 0; i < CREM_MSG_SLOTS; i++) {
		atomic64_set(&cn->msg_in[i], 0);
		atomic64_set(&cn->msg_out[i], 0);
	}
	/* Flow counters are never rewound: the totals restart from here. */
	crem_rs_flows_totals(cn->rs, sum, true);
	return 0;
}

/*
 * @ev: a flow-change event (CREM_FLOW_EVENT_*) to add, or -1. @id: include
 * the Flow ID (the reader has CAP_NET_ADMIN over the netns).
 */
static int crem_put_flow(struct sk_buff *msg, struct crem_rs_flow *f, struct crem_flow_info *fi,
			 int ev, u16 reason, bool id)
{
	struct nlattr *nest = nla_nest_start(msg, CREM_A_CMD_FLOW);

	crem_rs_flow_info(f, fi);
	if (!nest || (id && nla_put_u32(msg, CREM_A_FLOW_ID, fi->flow_id)) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_SRC, fi->key.saddr) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_DST, fi->key.daddr) ||
	    nla_put_u32(msg, CREM_A_FLOW_DEST_QP, fi->key.dqp) ||
	    nla_put_u8(msg, CREM_A_FLOW_SIDE, fi->key.side) ||
	    nla_put_u8(msg, CREM_A_FLOW_KIND, fi->key.kind) ||
	    nla_put_in_addr(msg, CREM_A_FLOW_PEER, fi->peer) ||
	    nla_put_u8(msg, CREM_A_FLOW_STATE, fi->state) ||
	    nla_put_u8(msg, CREM_A_FLOW_CONFIG_ID, fi->config_id) ||
	    nla_put_u8(msg, CREM_A_FLOW_SCHEME, fi->scheme) ||
	    nla_put_u8(msg, CREM_A_FLOW_K, fi->k) ||
	    nla_put_u8(msg, CREM_A_FLOW_M, fi->m) ||
	    nla_put_u16(msg, CREM_A_FLOW_SYMBOL_LEN, fi->symbol_len) ||
	    nla_put_u32(msg, CREM_A_FLOW_SRTT_US, fi->srtt_us) ||
	    nla_put_u32(msg, CREM_A_FLOW_MIN_RTT_US, fi->min_rtt_us) ||
	    nla_put_u32(msg, CREM_A_FLOW_RDMA_MTU, fi->rdma_mtu) ||
	    (fi->key.side == CREM_SIDE_CSF &&
		 nla_put_u8(msg, CREM_A_FLOW_RDMA_MTU_EXACT, fi->rdma_mtu_exact)) ||
	    nla_put_u32(msg, CREM_A_FLOW_LOSS_PPM, fi->loss_ppm) ||
	    nla_put_u8(msg, CREM_A_FLOW_LOSS_CLASS, fi->loss_class) ||
	    nla_put_u8(msg, CREM_A_FLOW_BREAKER, fi->breaker) ||
	    nla_put_u64_64bit(msg, CREM_A_FLOW_MEMORY, fi->mem, CREM_A_FLOW_PAD) ||
	    nla_put_u64_64bit(msg, CREM_A_FLOW_AGE_MS, fi->age_ms, CREM_A_FLOW_PAD) ||
	    crem_put_counters(msg, CREM_A_FLOW_STATS, fi->counters))
		return -EMSGSIZE;
	if (fi->key.side == CREM_SIDE_CSF && nla_put_u8(msg, CREM_A_FLOW_PINNED, fi->pinned))
		return -EMSGSIZE;
	if (fi->heard &&
	    nla_put_u64_64bit(msg, CREM_A_FLOW_LAST_MSG_MS, fi->last_msg_ms, CREM_A_FLOW_PAD))
		return -EMSGSIZE;
	if (fi->has_limits &&
	    (nla_put_u8(msg, CREM_A_FLOW_SCHEMES, fi->schemes) ||
	     nla_put_u8(msg, CREM_A_FLOW_MAX_K, fi->max_k) ||
	     nla_put_u8(msg, CREM_A_FLOW_MAX_M, fi->max_m) ||
	     nla_put_u16(msg, CREM_A_FLOW_MAX_SYMBOL_LEN, fi->max_t) ||
	     nla_put_u16(msg, CREM_A_FLOW_MAX_OPEN_BLOCKS, fi->max_open_blocks)))
		return -EMSGSIZE;
	if (ev >= 0 && (nla_put_u8(msg, CREM_A_FLOW_EVENT, ev) ||
			(ev == CREM_FLOW_EVENT_CLOSE_RECEIVED &&
			 nla_put_u16(msg, CREM_A_FLOW_CLOSE_REASON, reason))))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/* Payload of a message with one flow nest (crem_put_flow). */
static size_t crem_flow_msg_size(void)
{
	return nla_total_size(0) +		/* CREM_A_CMD_FLOW */
	       6 * nla_total_size(sizeof(u32)) + /* id, dest-qp, srtt-us, min-rtt-us,
						  * loss-ppm, rdma-mtu */
	       3 * nla_total_size(4) +		/* src, dst, peer */
	       15 * nla_total_size(sizeof(u8)) + /* side, kind, state, config-id, scheme,
						   * k, m, loss-class, breaker, event, pinned,
						   * schemes, max-k, max-m, rdma-mtu-exact */
	       4 * nla_total_size(sizeof(u16)) + /* symbol-len, close-reason,
						  * max-symbol-len, max-open-blocks */
	       3 * nla_total_size_64bit(sizeof(u64)) + /* memory, age-ms, last-msg-ms */
	       3 * nla_total_size(0) +		/* stats, msgs-{in,out}-by-type */
	       CREM_FS_N * nla_total_size_64bit(sizeof(u64));
}

/* One part of a flow-get dump: the flows that fit in @skb. */
struct crem_dump_part {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	struct crem_flow_info *fi;
	bool first; /* nothing in @skb yet */
	int err;
};

/* Puts @f in the part; true (stop: the next part starts with @f) when full. */
static bool crem_dump_one(struct crem_rs_flow *f, void *arg)
{
	struct crem_dump_part *d = arg;
	struct netlink_callback *cb = d->cb;
	void *hdr = genlmsg_put(d->skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				&crem_nl_family, NLM_F_MULTI, CREM_CMD_FLOW_GET);

	if (!hdr)
		return true;
	genl_dump_check_consistent(cb, hdr);
	if (crem_put_flow(d->skb, f, d->fi, -1, 0, cb->args[1] == 2)) {
		genlmsg_cancel(d->skb, hdr);
		/* A flow that does not fit an empty message never will. */
		d->err = d->first ? -EMSGSIZE : 0;
		return true;
	}
	genlmsg_end(d->skb, hdr);
	d->first = false;
	return false;
}

/*
 * cb->args[0]: where the walk of the table stopped (crem_rs_flows_walk's
 * cursor: a key chain and an index in it);
 * cb->args[1]: 0 before the first part, then 1 + whether the ids are shown
 * (decided once, so every part of a dump agrees).
 */
int crem_nl_flow_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct net *net = sock_net(skb->sk);
	struct crem_net *cn = crem_net(net);
	struct crem_dump_part d = { .skb = skb, .cb = cb, .first = true };
	u64 pos = cb->args[0];

	BUILD_BUG_ON(sizeof(cb->args[0]) < sizeof(pos));
	if (!cb->args[1])
		cb->args[1] = 1 + netlink_ns_capable(cb->skb, net->user_ns, CAP_NET_ADMIN);

	d.fi = kmalloc(sizeof(*d.fi), GFP_KERNEL);
	if (!d.fi)
		return -ENOMEM;
	/* Any change since the dump's first part flags the next message (or
	 * NLMSG_DONE) NLM_F_DUMP_INTR; +1: a seq of 0 would mean "unset". */
	cb->seq = crem_rs_flows_gen(cn->rs) + 1;
	crem_rs_flows_walk(cn->rs, &pos, crem_dump_one, &d);
	kfree(d.fi);
	cb->args[0] = pos;
	return d.err ?: skb->len;
}

/* Which flow a flow-get/flow-del names: id, and side and peer if given. */
struct crem_flow_sel {
	u32 id;
	int side; /* -1: either */
	__be32 peer; /* 0: any */
};

/* The request's flow nest, parsed into @tb; NULL if absent (@needs: what it must hold). */
static struct nlattr *crem_flow_nest_parse(struct genl_info *info, struct nlattr **tb,
					   const char *needs, int *err)
{
	struct nlattr *nest;

	if (GENL_REQ_ATTR_CHECK(info, CREM_A_CMD_FLOW)) {
		NL_SET_ERR_MSG_FMT(info->extack, "a flow nest with %s is required", needs);
		*err = -EINVAL;
		return NULL;
	}
	nest = info->attrs[CREM_A_CMD_FLOW];
	*err = nla_parse_nested(tb, CREM_A_FLOW_MAX, nest, crem_flow_nl_policy, info->extack);
	return *err ? NULL : nest;
}

/*
 * One IPv4 address attribute of a flow nest (@what names it in extack);
 * absent: an error if @required, else 0.
 */
static int crem_flow_addr(struct nlattr **tb, int type, const char *what, bool required,
			  __be32 *a, struct nlattr *nest, struct netlink_ext_ack *extack)
{
	*a = 0;
	if (!tb[type]) {
		if (!required)
			return 0;
		NL_SET_ERR_MSG_FMT(extack, "a new flow needs %s", what);
		NL_SET_BAD_ATTR(extack, nest);
		return -EINVAL;
	}
	if (nla_len(tb[type]) != 4) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, tb[type],
					"%s must be an IPv4 address (4 octets): flows are IPv4 only",
					what);
		return -EINVAL;
	}
	*a = nla_get_in_addr(tb[type]);
	return 0;
}

static int crem_flow_sel_parse(struct genl_info *info, struct nlattr **tb,
			       struct crem_flow_sel *sel)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *nest;
	int err;

	nest = crem_flow_nest_parse(info, tb, "the flow's id", &err);
	if (!nest)
		return err;
	if (NL_REQ_ATTR_CHECK(extack, nest, tb, CREM_A_FLOW_ID)) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "the flow's id is required");
		return -EINVAL;
	}
	sel->id = nla_get_u32(tb[CREM_A_FLOW_ID]);
	if (!sel->id) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_ID],
				    "id 0 names no flow (a flow still negotiating has no id yet)");
		return -EINVAL;
	}
	sel->side = -1;
	if (tb[CREM_A_FLOW_SIDE]) /* the policy allows only csf and crf */
		sel->side = nla_get_u8(tb[CREM_A_FLOW_SIDE]);
	return crem_flow_addr(tb, CREM_A_FLOW_PEER, "peer", false, &sel->peer, nest, extack);
}

/*
 * The one flow @sel names, under RCU; else NULL with the
 * reason in extack and *err set.
 */
static struct crem_rs_flow *crem_flow_find(struct crem_net *cn, const struct crem_flow_sel *sel,
					struct nlattr **tb, struct netlink_ext_ack *extack,
					int *err)
{
	u32 n = 0;
	struct crem_rs_flow *found = crem_rs_flows_find_id(cn->rs, sel->id, sel->side, sel->peer, &n);

	if (n == 1)
		return found;
	if (!n) {
		if (sel->side >= 0 || sel->peer)
			NL_SET_ERR_MSG_FMT(extack, "no flow with id %u%s%s", sel->id,
					   sel->side >= 0 ? " on that side" : "",
					   sel->peer ? " with that peer" : "");
		else
			NL_SET_ERR_MSG_FMT(extack, "no flow with id %u", sel->id);
		NL_SET_BAD_ATTR(extack, tb[CREM_A_FLOW_ID]);
		*err = -ENOENT;
	} else {
		NL_SET_ERR_MSG_FMT(extack, "%u flows have id %u: give side (and peer) too",
				   n, sel->id);
		NL_SET_BAD_ATTR(extack, tb[CREM_A_FLOW_ID]);
		*err = -ENOTUNIQ;
	}
	return NULL;
}

/*
 * Replies with one flow: the one @sel names (with @tb, its parsed nest), or
 * if @sel is NULL the flow of @key.
 */
static int crem_flow_reply(struct genl_info *info, struct crem_net *cn,
			   const struct crem_flow_sel *sel, struct nlattr **tb,
			   const struct crem_flow_key *key)
{
	struct crem_flow_info *fi = kmalloc(sizeof(*fi), GFP_KERNEL);
	struct sk_buff *msg = genlmsg_new(crem_flow_msg_size(), GFP_KERNEL);
	struct crem_rs_flow *f;
	void *hdr;
	int err = -ENOMEM;

	if (!fi || !msg)
		goto out;
	hdr = genlmsg_iput(msg, info);
	err = -EMSGSIZE;
	if (!hdr)
		goto out;
	rcu_read_lock();
	if (sel) {
		f = crem_flow_find(cn, sel, tb, info->extack, &err);
	} else {
		f = crem_flow_lookup(cn, key);
		err = -ENOENT;
		if (!f)
			NL_SET_ERR_MSG(info->extack, "the flow was set up, then removed at once (flow-del, or a configuration change)");
	}
	if (f) /* by id (flow-get's do) or a new flow (flow-new): both need CAP_NET_ADMIN */
		err = crem_put_flow(msg, f, fi, -1, 0, true);
	rcu_read_unlock();
	if (err)
		goto out;
	genlmsg_end(msg, hdr);
	kfree(fi);
	return genlmsg_reply(msg, info);
out:
	nlmsg_free(msg);
	kfree(fi);
	return err;
}

int crem_nl_flow_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[CREM_A_FLOW_MAX + 1];
	struct crem_flow_sel sel;
	int err;

	/* An answer by id tells whether the id exists: only for those who may see ids. */
	if (!netlink_ns_capable(skb, genl_info_net(info)->user_ns, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "flow-get by id needs CAP_NET_ADMIN: Flow IDs are kept from other users (they guard against blind injection); the dump lists flows without them");
		return -EPERM;
	}
	err = crem_flow_sel_parse(info, tb, &sel);
	if (err)
		return err;
	return crem_flow_reply(info, crem_net(genl_info_net(info)), &sel, tb, NULL);
}

int crem_nl_flow_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	struct nlattr *tb[CREM_A_FLOW_MAX + 1];
	struct crem_flow_sel sel;
	struct crem_rs_flow *f;
	bool removed = false;
	int err;

	err = crem_flow_sel_parse(info, tb, &sel);
	if (err)
		return err;
	rcu_read_lock();
	f = crem_flow_find(cn, &sel, tb, info->extack, &err);
	if (f)
		removed = crem_rs_flow_remove(f, CREM_CLOSE_NORMAL);
	rcu_read_unlock();
	if (!f)
		return err;
	/* Its flow-down and CLOSE before the reply (the one removed meanwhile's too). */
	crem_rs_flows_reap(cn->rs);
	if (!removed) {
		NL_SET_ERR_MSG(info->extack, "the flow is gone (removed meanwhile)");
		return -ENOENT;
	}
	return 0;
}

struct sk_buff *crem_nl_flow_ntf_alloc(struct crem_net *cn, gfp_t gfp)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&crem_nl_family, cn->net, CREM_NLGRP_EVENTS))
		return NULL;
	/* Sized to the flow: many queue up at a listener during churn. */
	msg = genlmsg_new(crem_flow_msg_size(), gfp);
	if (!msg)
		atomic64_inc(&cn->dp[CREM_DROP_NOTIFY]);
	return msg;
}

void crem_nl_flow_notify(struct crem_net *cn, struct sk_buff *msg, struct crem_rs_flow *f,
			 enum crem_ntf kind, int ev, u16 reason)
{
	static const u8 cmds[] = {
		[CREM_NTF_UP] = CREM_CMD_FLOW_UP,
		[CREM_NTF_DOWN] = CREM_CMD_FLOW_DOWN,
		[CREM_NTF_CHANGE] = CREM_CMD_FLOW_CHANGE,
	};
	struct crem_flow_info fi; /* on the stack: callers may hold RCU, no allocation here */
	u8 cmd;
	void *hdr;
	int err;

	/* About 560 octets now (identity, state, CREM_FS_N counters): keep it small. */
	BUILD_BUG_ON(sizeof(fi) > 640);
	if (!msg)
		return;
	if (WARN_ON_ONCE(kind >= ARRAY_SIZE(cmds))) {
		nlmsg_free(msg);
		return;
	}
	cmd = cmds[kind];
	hdr = genlmsg_put(msg, 0, 0, &crem_nl_family, 0, cmd);
	/* The ids too: only CAP_NET_ADMIN may join the group (crem-nl-gen.c). */
	if (!hdr || crem_put_flow(msg, f, &fi, ev, reason, true)) {
		nlmsg_free(msg);
		atomic64_inc(&cn->dp[CREM_DROP_NOTIFY]);
		return;
	}
	genlmsg_end(msg, hdr);
	/* GFP_ATOMIC: the creation path sends under RCU. */
	err = genlmsg_multicast_netns(&crem_nl_family, cn->net, msg, 0, CREM_NLGRP_EVENTS,
				      GFP_ATOMIC);
	if (err && err != -ESRCH) /* -ESRCH: the listeners left meanwhile */
		atomic64_inc(&cn->dp[CREM_DROP_NOTIFY]);
}


/* k and m of a flow nest, given together (flow-set, flow-new). */
static int crem_km_parse(struct nlattr **tb, u8 *k, u8 *m, struct netlink_ext_ack *extack)
{
	if (!tb[CREM_A_FLOW_K] || !tb[CREM_A_FLOW_M]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_K] ?: tb[CREM_A_FLOW_M],
				    "k and m are pinned together: give both");
		return -EINVAL;
	}
	*k = nla_get_u8(tb[CREM_A_FLOW_K]);
	*m = nla_get_u8(tb[CREM_A_FLOW_M]);
	if (!*k) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_K], "k must be at least 1");
		return -EINVAL;
	}
	if (*k + *m > 255) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_M],
				    "k + m must not exceed 255 (Repair Indices need i + k <= 255)");
		return -EINVAL;
	}
	if (*m > 16) { /* rust/engine.rs MAX_M, as config-set's m (crem_nl.c) */
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_M],
				    "m must not exceed 16 (the largest m of this module: its repair accumulator's)");
		return -EINVAL;
	}
	return 0;
}

/* flow-set's outcomes from the engine (crem_rs_flow_pin). */
static int crem_pin_error(int rc, struct netlink_ext_ack *extack)
{
	switch (rc) {
	case CREM_PIN_OK:
		return 0;
	case CREM_PIN_BUSY:
		NL_SET_ERR_MSG(extack, "the flow's previous configuration is not in effect yet (it starts at its Effective PSN, after more packets): retry later");
		return -EBUSY;
	case CREM_PIN_OUTSIDE_LIMITS:
		NL_SET_ERR_MSG(extack, "k or m is outside the limits negotiated with the peer (see the flow's k/m maxima in HELLO)");
		return -ERANGE;
	case CREM_PIN_NO_SLOT:
		NL_SET_ERR_MSG(extack, "the peer holds no free configuration slot: retry later");
		return -EBUSY;
	case CREM_PIN_NOT_ESTABLISHED:
		NL_SET_ERR_MSG(extack, "the flow is not protected (negotiating, or unprotected): nothing to pin");
		return -EAGAIN;
	case CREM_PIN_NO_POLICY:
		NL_SET_ERR_MSG(extack, "the flow was set up with adaptive off: there is no policy to hand it back to");
		return -EOPNOTSUPP;
	default:
		NL_SET_ERR_MSG(extack, "the flow is gone");
		return -ENOENT;
	}
}

int crem_nl_flow_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[CREM_A_FLOW_MAX + 1];
	struct crem_flow_sel sel;
	struct crem_rs_flow *f;
	bool pin;
	u8 k = 0, m = 0;
	int err, rc = CREM_PIN_FAILED;

	err = crem_flow_sel_parse(info, tb, &sel);
	if (err)
		return err;
	pin = tb[CREM_A_FLOW_K] || tb[CREM_A_FLOW_M];
	if (pin && tb[CREM_A_FLOW_PINNED] && !nla_get_u8(tb[CREM_A_FLOW_PINNED])) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_PINNED],
				    "give k and m to pin the flow, or pinned 0 to unpin it, not both");
		return -EINVAL;
	}
	if (!pin && !tb[CREM_A_FLOW_PINNED]) {
		NL_SET_ERR_MSG(extack, "nothing to set: give k and m (pin), or pinned 0 (adaptive)");
		return -EINVAL;
	}
	if (!pin && nla_get_u8(tb[CREM_A_FLOW_PINNED])) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_PINNED],
				    "pinned 1 needs the k and m to pin");
		return -EINVAL;
	}
	if (pin) {
		err = crem_km_parse(tb, &k, &m, extack);
		if (err)
			return err;
	}
	rcu_read_lock();
	f = crem_flow_find(cn, &sel, tb, extack, &err);
	if (f)
		rc = crem_rs_flow_pin(f, k, m, pin);
	if (f && rc == CREM_PIN_NOT_SENDER) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_ID],
				    "only a sender (csf) flow chooses its k and m");
		err = -EINVAL;
	} else if (f) {
		err = crem_pin_error(rc, extack);
	}
	rcu_read_unlock();
	return err;
}

int crem_nl_flow_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[CREM_A_FLOW_MAX + 1], *nest;
	struct crem_flow_key key = { .side = CREM_SIDE_CSF, .kind = CREM_KIND_REQUESTS };
	bool fixed;
	u8 k = 0, m = 0;
	int err;

	nest = crem_flow_nest_parse(info, tb, "src, dst and dest-qp", &err);
	if (!nest)
		return err;
	err = crem_flow_addr(tb, CREM_A_FLOW_SRC, "src", true, &key.saddr, nest, extack) ?:
	      crem_flow_addr(tb, CREM_A_FLOW_DST, "dst", true, &key.daddr, nest, extack);
	if (err)
		return err;
	if (NL_REQ_ATTR_CHECK(extack, nest, tb, CREM_A_FLOW_DEST_QP)) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "a new flow needs dest-qp");
		return -EINVAL;
	}
	key.dqp = nla_get_u32(tb[CREM_A_FLOW_DEST_QP]);
	if (key.dqp > 0xffffff) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_DEST_QP],
				    "dest-qp is a 24-bit queue pair number");
		return -EINVAL;
	}
	if (tb[CREM_A_FLOW_SIDE] && nla_get_u8(tb[CREM_A_FLOW_SIDE]) != CREM_SIDE_CSF) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_FLOW_SIDE],
				    "only a sender (csf) flow can be added: a receiver flow is set up by its peer's HELLO");
		return -EINVAL;
	}
	if (tb[CREM_A_FLOW_KIND])
		key.kind = nla_get_u8(tb[CREM_A_FLOW_KIND]);
	fixed = tb[CREM_A_FLOW_K] || tb[CREM_A_FLOW_M];
	if (fixed) {
		err = crem_km_parse(tb, &k, &m, extack);
		if (err)
			return err;
	}
	err = crem_flow_add(cn, &key, fixed, k, m, extack);
	if (err)
		return err;
	/* The flow as it is now (a flow-del may have taken it meanwhile). */
	return crem_flow_reply(info, cn, NULL, NULL, &key);
}

int crem_nl_flow_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct crem_net *cn = crem_net(genl_info_net(info));
	struct nlattr *tb[CREM_A_FLOW_MAX + 1];
	struct crem_flow_info *fi;
	struct crem_flow_sel sel;
	struct crem_rs_flow *f;
	bool done = false;
	int err;

	err = crem_flow_sel_parse(info, tb, &sel);
	if (err)
		return err;
	fi = kmalloc(sizeof(*fi), GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	rcu_read_lock();
	f = crem_flow_find(cn, &sel, tb, info->extack, &err);
	/* What it counted since its last reset moves to the totals' share of
	 * flows gone, in the section a removal reads its counters in. */
	if (f)
		done = crem_rs_flow_reset(f, fi);
	rcu_read_unlock();
	if (!done && f)
		NL_SET_ERR_MSG(info->extack, "the flow is gone");
	kfree(fi);
	return done ? 0 : (f ? -ENOENT : err);
}
