// SPDX-License-Identifier: GPL-2.0
/*
 * Handlers of the "crem" generic netlink family. Policies and the op table
 * are generated from netlink/crem.yaml (crem-nl-gen.c); this file checks
 * what a policy cannot express and explains every refusal through extack.
 */
#include <linux/module.h>
#include <linux/stringify.h>
#include <linux/user_namespace.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include "crem_glue.h"
#include "crem-nl-gen.h"
#include "crem_flow.h"

/* RoCEv2's UDP port: never the CREM port. */
#define CREM_ROCE_PORT 4791
/*
 * What the engines can do (rust/engine.rs): m up to MAX_M = 16, and symbols of
 * at most 1104 octets (the CSF's repair accumulator, CSF_ACC = 16 * 1104, and
 * the per-CPU decode output, DECODE_OUT in crem-core's engine/module_caps.rs,
 * are sized for them).
 */
#define CREM_CFG_MAX_M 16
#define CREM_CFG_MIN_T 64
#define CREM_CFG_MAX_T 1104
/*
 * What a REPAIR adds to its symbol (the draft's Operational Considerations:
 * T plus these must fit the path MTU): its header, 20 octets plus both
 * bitmaps of ceil(k / 32) words each, at most k = 255; UDP; IPv4.
 */
#define CREM_REPAIR_OVERHEAD (20 + 2 * 4 * DIV_ROUND_UP(255, 32) + 8 + 20)

/*
 * A netns owned by a user namespace other than the initial one gets no more
 * flows and memory than the initial netns allows (its own root may set its
 * configuration, but must not take more of the host than the host's admin
 * gave any namespace). crem_limits_mutex orders a commit of the initial
 * netns's limits (which lowers those above them: crem_limits_lower) against
 * the commit of another netns's (which clamps to them).
 */
static DEFINE_MUTEX(crem_limits_mutex);

static bool crem_net_limited(const struct net *net)
{
	return net->user_ns != &init_user_ns;
}

/* The initial netns's limits (exact under crem_limits_mutex). */
static void crem_init_limits(u32 *flows, u64 *mem)
{
	struct crem_net *icn = crem_net(&init_net);

	spin_lock_bh(&icn->cfg_lock);
	*flows = icn->cfg.max_flows;
	*mem = icn->cfg.max_memory;
	spin_unlock_bh(&icn->cfg_lock);
}

/* Clamps @c, a limited netns's, to the initial netns's limits; true if it changed. */
static bool crem_cfg_clamp(struct crem_cfg *c, u32 flows, u64 mem)
{
	bool changed = false;

	if (c->max_flows > flows) {
		c->max_flows = flows;
		changed = true;
	}
	if (c->max_memory > mem) {
		c->max_memory = mem;
		changed = true;
	}
	return changed;
}

void crem_cfg_defaults(struct crem_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->role = CREM_ROLE_DISABLED;
	cfg->recovery = CREM_RECOVERY_CODED;
	cfg->adaptive = 1;
	cfg->k = 32; /* the draft's default for multi-millisecond paths */
	cfg->m = 2;
	cfg->epsilon_ppb = 100000; /* 1e-4 */
	cfg->m_cong = 1;
	cfg->max_flows = 1024;
	cfg->max_bdp = 256; /* crem-core's MAX_BDP_DEFAULT */
	cfg->max_memory = 64ULL << 20;
}

static int crem_put_addr(struct sk_buff *msg, int type, const struct crem_addr *a)
{
	return nla_put(msg, type, a->len, a->a);
}

static int crem_put_cfg(struct sk_buff *msg, const struct crem_cfg *c)
{
	struct nlattr *nest, *peer;
	int i;

	nest = nla_nest_start(msg, CREM_A_CMD_CONFIG);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u16(msg, CREM_A_CONFIG_PORT, c->port) ||
	    nla_put_u8(msg, CREM_A_CONFIG_ROLE, c->role) ||
	    nla_put_u8(msg, CREM_A_CONFIG_RECOVERY, c->recovery) ||
	    nla_put_u8(msg, CREM_A_CONFIG_ADAPTIVE, c->adaptive) ||
	    nla_put_u8(msg, CREM_A_CONFIG_K, c->k) ||
	    nla_put_u8(msg, CREM_A_CONFIG_M, c->m) ||
	    nla_put_u16(msg, CREM_A_CONFIG_SYMBOL_LEN, c->symbol_len) ||
	    nla_put_u32(msg, CREM_A_CONFIG_EPSILON_PPB, c->epsilon_ppb) ||
	    nla_put_u8(msg, CREM_A_CONFIG_M_CONG, c->m_cong) ||
	    nla_put_u32(msg, CREM_A_CONFIG_HOLD_US, c->hold_us) ||
	    nla_put_u32(msg, CREM_A_CONFIG_MAX_FLOWS, c->max_flows) ||
	    nla_put_u64_64bit(msg, CREM_A_CONFIG_MAX_MEMORY, c->max_memory,
			      CREM_A_CONFIG_PAD) ||
	    nla_put_u32(msg, CREM_A_CONFIG_MAX_BDP, c->max_bdp))
		return -EMSGSIZE;
	for (i = 0; i < c->n_reporters; i++)
		if (crem_put_addr(msg, CREM_A_CONFIG_REPORTER, &c->reporters[i]))
			return -EMSGSIZE;
	for (i = 0; i < c->n_peers; i++) {
		peer = nla_nest_start(msg, CREM_A_CONFIG_PEER);
		if (!peer ||
		    crem_put_addr(msg, CREM_A_PEER_PREFIX, &c->peers[i].prefix) ||
		    nla_put_u8(msg, CREM_A_PEER_PREFIX_LEN, c->peers[i].prefix_len) ||
		    crem_put_addr(msg, CREM_A_PEER_ADDR, &c->peers[i].addr))
			return -EMSGSIZE;
		nla_nest_end(msg, peer);
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* A reply or notification carrying the whole configuration. */
static struct sk_buff *crem_cfg_msg(struct net *net, u32 portid, u32 seq, u8 cmd)
{
	struct crem_net *cn = crem_net(net);
	struct crem_cfg *snap;
	struct sk_buff *msg;
	void *hdr;

	/* Snapshot under the lock, build the message outside it. */
	snap = kmalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return NULL;
	spin_lock_bh(&cn->cfg_lock);
	*snap = cn->cfg;
	spin_unlock_bh(&cn->cfg_lock);
	/*
	 * A limited netns's defaults may exceed the initial netns's limits until
	 * its first config-set clamps them (nothing runs before that: no port, no
	 * role); show what applies.
	 */
	if (crem_net_limited(net)) {
		u32 flows;
		u64 mem;

		crem_init_limits(&flows, &mem);
		crem_cfg_clamp(snap, flows, mem);
	}

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	hdr = genlmsg_put(msg, portid, seq, &crem_nl_family, 0, cmd);
	if (!hdr || crem_put_cfg(msg, snap)) {
		nlmsg_free(msg);
		msg = NULL;
		goto out;
	}
	genlmsg_end(msg, hdr);
out:
	kfree(snap);
	return msg;
}

int crem_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;

	msg = crem_cfg_msg(genl_info_net(info), info->snd_portid, info->snd_seq,
			   CREM_CMD_CONFIG_GET);
	if (!msg)
		return -ENOMEM;
	return genlmsg_reply(msg, info);
}

/*
 * The policy of every address attribute (netlink/gen.sh puts it there): IPv4
 * or IPv6, 4 or 16 octets.
 */
int crem_nl_validate_addr(const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	if (nla_len(attr) == 4 || nla_len(attr) == 16)
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr, "address must be 4 (IPv4) or 16 (IPv6) octets");
	return -EINVAL;
}

/* A reporter's: an address, or empty (which clears the list). */
int crem_nl_validate_reporter(const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	return nla_len(attr) ? crem_nl_validate_addr(attr, extack) : 0;
}

/* An address attribute, its length checked by the policy (crem_nl_validate_addr). */
static int crem_get_addr(const struct nlattr *attr, struct crem_addr *a,
			 struct netlink_ext_ack *extack)
{
	int len = nla_len(attr);

	if (crem_nl_validate_addr(attr, extack))
		return -EINVAL;
	a->len = len;
	nla_memcpy(a->a, attr, len);
	return 0;
}

/* Whether @a has any bit set past its first @len bits. */
static bool crem_host_bits(const struct crem_addr *a, u8 len)
{
	int i;

	for (i = len / 8; i < a->len; i++) {
		u8 keep = (i == len / 8) ? (u8)(0xff00 >> (len % 8)) : 0;

		if (a->a[i] & ~keep)
			return true;
	}
	return false;
}

/* Peer @n of @c must not repeat the prefix of an earlier one. */
static int crem_peer_unique(const struct crem_cfg *c, int n, const struct nlattr *attr,
			    struct netlink_ext_ack *extack)
{
	const struct crem_peer *p = &c->peers[n];
	int i;

	for (i = 0; i < n; i++)
		if (c->peers[i].prefix_len == p->prefix_len &&
		    c->peers[i].prefix.len == p->prefix.len &&
		    !memcmp(c->peers[i].prefix.a, p->prefix.a, p->prefix.len)) {
			NL_SET_ERR_MSG_ATTR(extack, attr, "duplicate peer prefix");
			return -EEXIST;
		}
	return 0;
}

static int crem_parse_peer(const struct nlattr *nest, struct crem_peer *p,
			   struct netlink_ext_ack *extack)
{
	struct nlattr *tb[CREM_A_PEER_MAX + 1];
	int err;

	err = nla_parse_nested(tb, CREM_A_PEER_MAX, nest, crem_peer_nl_policy, extack);
	if (err)
		return err;
	if (!tb[CREM_A_PEER_PREFIX] || !tb[CREM_A_PEER_ADDR] ||
	    !tb[CREM_A_PEER_PREFIX_LEN]) {
		NL_SET_ERR_MSG_ATTR(extack, nest, "a peer needs prefix, prefix-len and addr");
		return -EINVAL;
	}
	err = crem_get_addr(tb[CREM_A_PEER_PREFIX], &p->prefix, extack) ?:
	      crem_get_addr(tb[CREM_A_PEER_ADDR], &p->addr, extack);
	if (err)
		return err;
	p->prefix_len = nla_get_u8(tb[CREM_A_PEER_PREFIX_LEN]);
	if (p->prefix_len > p->prefix.len * 8) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_PEER_PREFIX_LEN],
				    "prefix-len is longer than the prefix's address");
		return -EINVAL;
	}
	if (crem_host_bits(&p->prefix, p->prefix_len)) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_PEER_PREFIX],
				    "prefix has host bits set beyond prefix-len");
		return -EINVAL;
	}
	if (p->prefix.len != p->addr.len) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_PEER_ADDR],
				    "peer address family differs from its prefix's");
		return -EINVAL;
	}
	return 0;
}

/*
 * Applies the attributes in @tb on top of @c. Lists (reporters, peers) are
 * replaced as a whole when given, so a set is never a partial merge.
 */
static int crem_apply_cfg(struct crem_cfg *c, struct nlattr **tb, const struct nlattr *nest,
			  struct netlink_ext_ack *extack)
{
	const struct nlattr *a;
	bool reporters = false, peers = false;
	int rem, err;

	if (tb[CREM_A_CONFIG_PORT])
		c->port = nla_get_u16(tb[CREM_A_CONFIG_PORT]);
	if (tb[CREM_A_CONFIG_ROLE])
		c->role = nla_get_u8(tb[CREM_A_CONFIG_ROLE]);
	if (tb[CREM_A_CONFIG_RECOVERY])
		c->recovery = nla_get_u8(tb[CREM_A_CONFIG_RECOVERY]);
	if (tb[CREM_A_CONFIG_ADAPTIVE])
		c->adaptive = nla_get_u8(tb[CREM_A_CONFIG_ADAPTIVE]);
	if (tb[CREM_A_CONFIG_K])
		c->k = nla_get_u8(tb[CREM_A_CONFIG_K]);
	if (tb[CREM_A_CONFIG_M])
		c->m = nla_get_u8(tb[CREM_A_CONFIG_M]);
	if (tb[CREM_A_CONFIG_SYMBOL_LEN])
		c->symbol_len = nla_get_u16(tb[CREM_A_CONFIG_SYMBOL_LEN]);
	if (tb[CREM_A_CONFIG_EPSILON_PPB])
		c->epsilon_ppb = nla_get_u32(tb[CREM_A_CONFIG_EPSILON_PPB]);
	if (tb[CREM_A_CONFIG_M_CONG])
		c->m_cong = nla_get_u8(tb[CREM_A_CONFIG_M_CONG]);
	if (tb[CREM_A_CONFIG_HOLD_US])
		c->hold_us = nla_get_u32(tb[CREM_A_CONFIG_HOLD_US]);
	if (tb[CREM_A_CONFIG_MAX_BDP])
		c->max_bdp = nla_get_u32(tb[CREM_A_CONFIG_MAX_BDP]);
	if (tb[CREM_A_CONFIG_MAX_FLOWS])
		c->max_flows = nla_get_u32(tb[CREM_A_CONFIG_MAX_FLOWS]);
	if (tb[CREM_A_CONFIG_MAX_MEMORY])
		c->max_memory = nla_get_u64(tb[CREM_A_CONFIG_MAX_MEMORY]);

	nla_for_each_nested(a, nest, rem) {
		switch (nla_type(a)) {
		case CREM_A_CONFIG_REPORTER:
			if (!reporters) {
				reporters = true;
				c->n_reporters = 0;
			}
			if (!nla_len(a)) /* an empty reporter clears the list */
				break;
			if (c->n_reporters == CREM_MAX_REPORTERS) {
				NL_SET_ERR_MSG_ATTR_FMT(extack, a, "at most %d reporters",
							CREM_MAX_REPORTERS);
				return -E2BIG;
			}
			err = crem_get_addr(a, &c->reporters[c->n_reporters], extack);
			if (err)
				return err;
			c->n_reporters++;
			break;
		case CREM_A_CONFIG_PEER:
			if (!peers) {
				peers = true;
				c->n_peers = 0;
			}
			if (!nla_len(a)) /* an empty peer nest clears the list */
				break;
			if (c->n_peers == CREM_MAX_PEERS) {
				NL_SET_ERR_MSG_ATTR_FMT(extack, a, "at most %d peers", CREM_MAX_PEERS);
				return -E2BIG;
			}
			err = crem_parse_peer(a, &c->peers[c->n_peers], extack) ?:
			      crem_peer_unique(c, c->n_peers, a, extack);
			if (err)
				return err;
			c->n_peers++;
			break;
		}
	}

	/* Rules across attributes, checked on the merged result. */
	if (c->role != CREM_ROLE_DISABLED && !c->port) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_ROLE] ?: nest,
				    "set a CREM port before enabling a role (there is no default port)");
		return -EINVAL;
	}
	if (c->port == CREM_ROCE_PORT) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_PORT] ?: nest,
				    "4791 is RoCEv2's own port: the CREM port must be another one");
		return -EINVAL;
	}
	if ((unsigned int)c->k + c->m > 255) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_M] ?: tb[CREM_A_CONFIG_K] ?: nest,
				    "k + m must not exceed 255 (Repair Indices need i + k <= 255)");
		return -EINVAL;
	}
	if (c->m > CREM_CFG_MAX_M) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_M] ?: nest,
				    "m must not exceed " __stringify(CREM_CFG_MAX_M)
				    " (the largest m of this module: its repair accumulator's)");
		return -EINVAL;
	}
	if (c->symbol_len && c->symbol_len < CREM_CFG_MIN_T) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_SYMBOL_LEN],
				    "symbol-len must be 0 (derived) or at least 64");
		return -EINVAL;
	}
	if (c->symbol_len > CREM_CFG_MAX_T) {
		NL_SET_ERR_MSG_ATTR(extack, tb[CREM_A_CONFIG_SYMBOL_LEN],
				    "symbol-len must not exceed " __stringify(CREM_CFG_MAX_T)
				    " (the decode buffer's and the repair accumulator's symbols)");
		return -EINVAL;
	}
	return 0;
}

/*
 * A given symbol-len (or new peers with one set) must fit, with a REPAIR's
 * headers, the MTU of the route to each IPv4 peer that has a route now (the
 * module sends only to IPv4 peers; a peer without a route yet is not judged).
 */
static int crem_check_mtu(struct net *net, const struct crem_cfg *c, struct nlattr **tb,
			  const struct nlattr *nest, struct netlink_ext_ack *extack)
{
	u32 need = c->symbol_len + CREM_REPAIR_OVERHEAD;
	int i;

	if (!c->symbol_len)
		return 0;
	for (i = 0; i < c->n_peers; i++) {
		struct flowi4 fl4 = { .flowi4_proto = IPPROTO_UDP };
		struct rtable *rt;
		u32 mtu;

		if (c->peers[i].addr.len != 4)
			continue;
		memcpy(&fl4.daddr, c->peers[i].addr.a, 4);
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			continue;
		mtu = dst_mtu(&rt->dst);
		ip_rt_put(rt);
		if (need > mtu) {
			NL_SET_ERR_MSG_ATTR_FMT(extack, tb[CREM_A_CONFIG_SYMBOL_LEN] ?: nest,
						"symbol-len %u: REPAIRs need MTU %u, the route to %pI4 has %u",
						c->symbol_len, need, &fl4.daddr, mtu);
			return -EMSGSIZE;
		}
	}
	return 0;
}

/*
 * A limited netns (crem_net_limited) may not ask for more than the initial
 * netns's limits; what it does not set is clamped to them.
 */
static int crem_check_limits(struct net *net, struct crem_cfg *c, struct nlattr **tb,
			     struct netlink_ext_ack *extack)
{
	u32 flows;
	u64 mem;

	if (!crem_net_limited(net))
		return 0;
	crem_init_limits(&flows, &mem);
	if (tb[CREM_A_CONFIG_MAX_FLOWS] && c->max_flows > flows) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, tb[CREM_A_CONFIG_MAX_FLOWS],
					"max-flows %u is above the initial netns's max-flows (%u)",
					c->max_flows, flows);
		return -ERANGE;
	}
	if (tb[CREM_A_CONFIG_MAX_MEMORY] && c->max_memory > mem) {
		NL_SET_ERR_MSG_ATTR_FMT(extack, tb[CREM_A_CONFIG_MAX_MEMORY],
					"max-memory %llu is above the initial netns's (%llu)",
					c->max_memory, mem);
		return -ERANGE;
	}
	crem_cfg_clamp(c, flows, mem);
	return 0;
}

/*
 * The initial netns's limits are now @flows and @mem: every limited netns
 * above them is lowered (and notified). Under crem_limits_mutex.
 */
static void crem_limits_lower(u32 flows, u64 mem)
{
	struct net *net;

	lockdep_assert_held(&crem_limits_mutex);
	down_read(&net_rwsem);
	for_each_net(net) {
		struct crem_net *cn;
		struct sk_buff *ev;
		bool changed;

		if (!crem_net_limited(net))
			continue;
		/* Listed: its pernet init has run and its exit has not. */
		cn = crem_net(net);
		spin_lock_bh(&cn->cfg_lock);
		changed = crem_cfg_clamp(&cn->cfg, flows, mem);
		spin_unlock_bh(&cn->cfg_lock);
		if (!changed)
			continue;
		ev = crem_cfg_msg(net, 0, 0, CREM_CMD_CONFIG_CHANGED);
		if (ev)
			genlmsg_multicast_netns(&crem_nl_family, net, ev, 0, CREM_NLGRP_EVENTS,
						GFP_KERNEL);
	}
	up_read(&net_rwsem);
}

int crem_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct crem_net *cn = crem_net(net);
	struct nlattr *tb[CREM_A_CONFIG_MAX + 1], *nest;
	struct crem_cfg *c;
	struct sk_buff *ev;
	bool changed = false, lower;
	u16 old_port;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, CREM_A_CMD_CONFIG))
		return -EINVAL;
	nest = info->attrs[CREM_A_CMD_CONFIG];
	err = nla_parse_nested(tb, CREM_A_CONFIG_MAX, nest, crem_config_nl_policy, info->extack);
	if (err)
		return err;
	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	/*
	 * One setter at a time from snapshot to commit (parallel_ops lets them
	 * run at once): two interleaved would each apply to the same snapshot,
	 * the later commit undoing the other's change, or commit a port that
	 * the other's socket serves.
	 */
	mutex_lock(&cn->sock_mutex);
	spin_lock_bh(&cn->cfg_lock);
	*c = cn->cfg;
	spin_unlock_bh(&cn->cfg_lock);
	old_port = c->role != CREM_ROLE_DISABLED ? c->port : 0;
	err = crem_apply_cfg(c, tb, nest, info->extack) ?:
	      crem_check_limits(net, c, tb, info->extack);
	if (!err && (tb[CREM_A_CONFIG_SYMBOL_LEN] || tb[CREM_A_CONFIG_PEER]))
		err = crem_check_mtu(net, c, tb, nest, info->extack);
	if (!err) {
		/* The socket exists while a role is active; bound before the commit. */
		err = crem_rs_sock_reconfigure(cn->rs, c->role != CREM_ROLE_DISABLED ? c->port : 0);
		if (err == -EADDRINUSE && old_port)
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, tb[CREM_A_CONFIG_PORT] ?: nest,
						"port %u is in use by another socket; port %u still serves CREM",
						c->port, old_port);
		else if (err == -EADDRINUSE)
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, tb[CREM_A_CONFIG_PORT] ?: nest,
						"port %u is in use by another socket; CREM stays off",
						c->port);
		else if (err)
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, tb[CREM_A_CONFIG_PORT] ?: nest,
						"cannot bind the CREM port %u: error %d (nothing changed)",
						c->port, err);
	}
	if (!err) {
		mutex_lock(&crem_limits_mutex);
		if (crem_net_limited(net)) { /* exact now: the initial netns's may have moved */
			u32 flows;
			u64 mem;

			crem_init_limits(&flows, &mem);
			crem_cfg_clamp(c, flows, mem);
		}
		spin_lock_bh(&cn->cfg_lock);
		changed = memcmp(&cn->cfg, c, sizeof(*c)) != 0;
		lower = c->max_flows < cn->cfg.max_flows || c->max_memory < cn->cfg.max_memory;
		spin_unlock_bh(&cn->cfg_lock);
		/*
		 * The datapath's peers, reporters and flow defaults (read without
		 * a lock) first, so that a flow set up once the role below has
		 * changed has the new defaults too (this netns's commits are
		 * serialised by sock_mutex, other netns's clamps by limits_mutex).
		 */
		if (changed)
			crem_rs_config_commit(cn->rs, c);
		spin_lock_bh(&cn->cfg_lock);
		cn->cfg = *c;
		spin_unlock_bh(&cn->cfg_lock);
		if (lower && net_eq(net, &init_net))
			crem_limits_lower(c->max_flows, c->max_memory);
		mutex_unlock(&crem_limits_mutex);
	}
	mutex_unlock(&cn->sock_mutex);
	kfree(c);
	if (err || !changed) /* notify only real changes */
		return err;
	ev = crem_cfg_msg(net, 0, 0, CREM_CMD_CONFIG_CHANGED);
	if (ev)
		genlmsg_multicast_netns(&crem_nl_family, net, ev, 0, CREM_NLGRP_EVENTS,
					GFP_KERNEL);
	return 0;
}
