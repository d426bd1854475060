// SPDX-License-Identifier: GPL-2.0
/*
 * Restored and held packets go on toward the RDMA receiver as if they came
 * from the network: in gateway mode, out of the forwarding route; in host
 * mode, into this host's receive path on the device the flow arrives on.
 * There they pass the LOCAL_IN hook again, where the CRF sees a PSN it has
 * already delivered (a duplicate, counted as such) and lets it through.
 *
 * A restored packet is rebuilt around its RoCEv2 UDP payload from the flow's
 * template (addresses, source port, DSCP, TTL of its last packet); UDP
 * checksum 0 as RoCEv2 allows. The caller fills in the IPv4 Identification
 * (solved from the ICRC) and the header checksum.
 */
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/dst.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include "crem_flow.h"

#define ROCEV2_UDP_PORT 4791

struct sk_buff *crem_build_restored(struct crem_flow *f, const u8 *p, u32 len)
{
	struct net *net = f->cn->net;
	struct flowi4 fl4 = { .daddr = f->key.daddr, .flowi4_proto = IPPROTO_UDP };
	struct sk_buff *skb;
	struct udphdr *uh;
	struct iphdr *iph;
	struct rtable *rt = NULL;
	u32 hlen = sizeof(*iph) + sizeof(*uh);

	if (!f->host) {
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return NULL;
	}
	skb = alloc_skb(LL_MAX_HEADER + hlen + len, GFP_ATOMIC);
	if (!skb) {
		if (rt)
			ip_rt_put(rt);
		return NULL;
	}
	skb_reserve(skb, LL_MAX_HEADER + hlen);
	skb_put_data(skb, p, len);
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = f->sport;
	uh->dest = htons(ROCEV2_UDP_PORT);
	uh->len = htons(sizeof(*uh) + len);
	uh->check = 0;
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = f->tos;
	iph->tot_len = htons(hlen + len);
	iph->id = 0;
	iph->frag_off = f->frag_off;
	/* The TTL the original would have had after this hop. */
	iph->ttl = f->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = f->key.saddr;
	iph->daddr = f->key.daddr; /* id and checksum: crem_glue_crf_restored */
	skb->protocol = htons(ETH_P_IP);
	skb->ip_summed = CHECKSUM_NONE;
	if (rt)
		skb_dst_set(skb, &rt->dst);
	return skb;
}

/* Host mode: hand @skb (network header at data) to the receive path. */
static int crem_deliver_local(struct crem_flow *f, struct sk_buff *skb)
{
	struct net_device *dev;
	int err;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(f->cn->net, f->ifindex);
	if (!dev) {
		rcu_read_unlock();
		kfree_skb(skb);
		return -ENODEV;
	}
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb->dev = dev;
	skb->protocol = htons(ETH_P_IP);
	skb->pkt_type = PACKET_HOST;
	skb_reset_network_header(skb);
	err = netif_rx(skb) == NET_RX_SUCCESS ? 0 : -ENOBUFS;
	rcu_read_unlock();
	return err;
}

void crem_inject(struct crem_flow *f, struct sk_buff *skb)
{
	int err = f->host ? crem_deliver_local(f, skb) : dst_output(f->cn->net, NULL, skb);

	if (err)
		f->ctr.inject_fail++;
	else
		f->ctr.injected++;
}
