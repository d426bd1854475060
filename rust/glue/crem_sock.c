// SPDX-License-Identifier: GPL-2.0
/*
 * The per-netns CREM socket: an in-kernel UDP socket on the configured CREM
 * port (none until configured). Datagrams arrive through the udp-tunnel
 * encap hook in softirq and go to the flow table; messages leave with
 * udp_tunnel_xmit_skb from whatever context the engines run in.
 */
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>
#include <net/route.h>
#include <net/inet_ecn.h>
#include "crem_flow.h"

/*
 * Receive: the whole datagram, linear, from a configured peer only. Its ECN
 * goes with it: a CE-marked REPAIR is the draft's congestion signal for the
 * repair path (LOSS_REPORT's "repairs CE marked").
 */
static int crem_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct crem_net *cn = rcu_dereference_sk_user_data(sk);
	enum skb_drop_reason reason;
	u32 len;

	if (!cn) {
		reason = SKB_DROP_REASON_SOCKET_CLOSE;
		goto drop;
	}
	if (skb->protocol != htons(ETH_P_IP)) {
		reason = SKB_DROP_REASON_UNHANDLED_PROTO;
		goto drop;
	}
	if (skb->len < sizeof(struct udphdr)) {
		reason = SKB_DROP_REASON_PKT_TOO_SMALL;
		goto drop;
	}
	if (skb_linearize(skb)) {
		reason = SKB_DROP_REASON_NOMEM;
		goto drop;
	}
	len = skb->len - sizeof(struct udphdr);
	atomic64_inc(&cn->dp[CREM_EV_MSG_IN]);
	crem_flow_msg(cn, ip_hdr(skb)->saddr, skb->data + sizeof(struct udphdr), len,
		      ip_hdr(skb)->tos);
	consume_skb(skb);
	return 0;
drop:
	if (cn)
		atomic64_inc(&cn->dp[CREM_DROP_MSG_INVALID]);
	kfree_skb_reason(skb, reason);
	return 0;
}

/* Where a queued message goes, in its skb's control block. */
struct crem_msg_cb {
	__be32 to;
	u8 tos, slot;
};

static inline struct crem_msg_cb *crem_msg_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct crem_msg_cb) > sizeof(skb->cb));
	return (struct crem_msg_cb *)skb->cb;
}

static struct sk_buff *crem_msg_skb(const u8 *msg, u32 len)
{
	u32 room = LL_MAX_HEADER + sizeof(struct iphdr) + sizeof(struct udphdr);
	struct sk_buff *skb = alloc_skb(room + len, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	skb_put_data(skb, msg, len);
	return skb;
}

/* Sends @skb (consumed) from the namespace's CREM socket. */
static int crem_sock_xmit(struct crem_net *cn, __be32 to, u8 tos, u8 slot, struct sk_buff *skb)
{
	struct flowi4 fl4 = { .daddr = to, .flowi4_proto = IPPROTO_UDP };
	struct socket *sock;
	struct rtable *rt;
	int err = -ENOTCONN;

	rcu_read_lock_bh();
	sock = rcu_dereference_bh(cn->sock);
	if (!sock)
		goto out;
	fl4.fl4_sport = inet_sk(sock->sk)->inet_sport;
	fl4.fl4_dport = fl4.fl4_sport;
	rt = ip_route_output_key(cn->net, &fl4);
	if (IS_ERR(rt)) {
		err = PTR_ERR(rt);
		goto out;
	}
	udp_tunnel_xmit_skb(rt, sock->sk, skb, fl4.saddr, to, tos, ip4_dst_hoplimit(&rt->dst),
			    0, fl4.fl4_sport, fl4.fl4_dport, false, false);
	skb = NULL;
	atomic64_inc(&cn->dp[CREM_EV_MSG_OUT]);
	atomic64_inc(&cn->msg_out[min_t(u8, slot, CREM_MSG_SLOTS - 1)]);
	err = 0;
out:
	rcu_read_unlock_bh();
	if (err) {
		kfree_skb(skb);
		atomic64_inc(&cn->dp[CREM_DROP_SEND]);
	}
	return err;
}

int crem_sock_send(struct crem_net *cn, __be32 to, u8 tos, u8 slot, const u8 *msg, u32 len)
{
	struct sk_buff *skb = crem_msg_skb(msg, len);

	if (!skb) {
		atomic64_inc(&cn->dp[CREM_DROP_SEND]);
		return -ENOMEM;
	}
	return crem_sock_xmit(cn, to, tos, slot, skb);
}

int crem_sock_queue(struct sk_buff_head *q, __be32 to, u8 tos, u8 slot, const u8 *msg, u32 len)
{
	struct sk_buff *skb = crem_msg_skb(msg, len);

	if (!skb)
		return -ENOMEM;
	crem_msg_cb(skb)->to = to;
	crem_msg_cb(skb)->tos = tos;
	crem_msg_cb(skb)->slot = slot;
	__skb_queue_tail(q, skb);
	return 0;
}

void crem_glue_sock_flush(struct crem_net *cn, struct sk_buff_head *q)
{
	struct sk_buff *skb;

	if (unlikely(!cn)) { /* a netns state without C's (KUnit): nowhere to send */
		__skb_queue_purge(q);
		return;
	}
	while ((skb = __skb_dequeue(q))) {
		struct crem_msg_cb cb = *crem_msg_cb(skb);

		crem_sock_xmit(cn, cb.to, cb.tos, cb.slot, skb);
	}
}

void crem_sock_close(struct crem_net *cn)
{
	struct socket *sock = rcu_replace_pointer(cn->sock, NULL, lockdep_is_held(&cn->sock_mutex));

	if (!sock)
		return;
	/* Flows send through the socket: none may survive it. */
	crem_flows_flush(cn);
	synchronize_net();
	udp_tunnel_sock_release(sock);
}

/*
 * (Re)binds the socket to @port (0: none), under cn->sock_mutex (config-set
 * holds it from its snapshot to its commit). The new socket is bound before
 * the old one goes: if @port cannot be bound (in use, say), the old socket
 * keeps serving and the error is returned. Process context, may sleep.
 */
int crem_sock_reconfigure(struct net *net, struct crem_net *cn, u16 port)
{
	struct udp_port_cfg ucfg = {
		.family = AF_INET,
		.local_ip.s_addr = htonl(INADDR_ANY),
		.local_udp_port = htons(port),
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = cn,
		.encap_type = 1,
		.encap_rcv = crem_encap_rcv,
	};
	struct socket *sock = NULL, *old;
	int err;

	lockdep_assert_held(&cn->sock_mutex);
	old = rcu_dereference_protected(cn->sock, lockdep_is_held(&cn->sock_mutex));
	if (old ? inet_sk(old->sk)->inet_sport == htons(port) : !port)
		return 0;
	if (port) {
		err = udp_sock_create(net, &ucfg, &sock);
		if (err)
			return err;
	}
	/* Bound: swap. The old socket's flows go with it (crem_sock_close). */
	crem_sock_close(cn);
	if (sock) {
		setup_udp_tunnel_sock(net, sock, &tcfg);
		rcu_assign_pointer(cn->sock, sock);
	}
	return 0;
}
