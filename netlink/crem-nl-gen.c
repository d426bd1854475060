// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	netlink/crem.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "crem-nl-gen.h"

#include "../include/uapi/linux/crem.h"

/* Integer value ranges */
static const struct netlink_range_validation crem_a_config_epsilon_ppb_range = {
	.min	= 1ULL,
	.max	= 1000000000ULL,
};

static const struct netlink_range_validation crem_a_config_hold_us_range = {
	.max	= 1000000ULL,
};

static const struct netlink_range_validation crem_a_config_max_flows_range = {
	.max	= 65536ULL,
};

static const struct netlink_range_validation crem_a_config_max_memory_range = {
	.max	= 68719476736ULL,
};

static const struct netlink_range_validation crem_a_config_max_bdp_range = {
	.min	= 64ULL,
	.max	= 524288ULL,
};

/* Common nested types */
const struct nla_policy crem_peer_nl_policy[CREM_A_PEER_ADDR + 1] = {
	[CREM_A_PEER_PREFIX] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
	[CREM_A_PEER_PREFIX_LEN] = NLA_POLICY_MAX(NLA_U8, 128),
	[CREM_A_PEER_ADDR] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
};

/* CREM_CMD_CONFIG_SET - do */
static const struct nla_policy crem_config_set_nl_policy[CREM_A_CONFIG_SPARE_FLOWS + 1] = {
	[CREM_A_CONFIG_PORT] = { .type = NLA_U16, },
	[CREM_A_CONFIG_ROLE] = NLA_POLICY_MAX(NLA_U8, 2),
	[CREM_A_CONFIG_RECOVERY] = NLA_POLICY_MAX(NLA_U8, 2),
	[CREM_A_CONFIG_ADAPTIVE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_CONFIG_K] = NLA_POLICY_MIN(NLA_U8, 1),
	[CREM_A_CONFIG_M] = { .type = NLA_U8, },
	[CREM_A_CONFIG_SYMBOL_LEN] = { .type = NLA_U16, },
	[CREM_A_CONFIG_EPSILON_PPB] = NLA_POLICY_FULL_RANGE(NLA_U32, &crem_a_config_epsilon_ppb_range),
	[CREM_A_CONFIG_M_CONG] = { .type = NLA_U8, },
	[CREM_A_CONFIG_HOLD_US] = NLA_POLICY_FULL_RANGE(NLA_U32, &crem_a_config_hold_us_range),
	[CREM_A_CONFIG_MAX_FLOWS] = NLA_POLICY_FULL_RANGE(NLA_U32, &crem_a_config_max_flows_range),
	[CREM_A_CONFIG_MAX_MEMORY] = NLA_POLICY_FULL_RANGE(NLA_U64, &crem_a_config_max_memory_range),
	[CREM_A_CONFIG_MAX_BDP] = NLA_POLICY_FULL_RANGE(NLA_U32, &crem_a_config_max_bdp_range),
	[CREM_A_CONFIG_REPORT] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_CONFIG_NODE_ID] = { .type = NLA_U32, },
	[CREM_A_CONFIG_REPORT_INTERVAL_US] = { .type = NLA_U32, },
	[CREM_A_CONFIG_REPORT_FLOW_GAP_US] = { .type = NLA_U32, },
	[CREM_A_CONFIG_REPORT_PORT_RATE] = { .type = NLA_U32, },
	[CREM_A_CONFIG_REPORT_PSNS] = { .type = NLA_U8, },
	[CREM_A_CONFIG_REPORTER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_reporter, 16),
	[CREM_A_CONFIG_PEER] = NLA_POLICY_NESTED(crem_peer_nl_policy),
	[CREM_A_CONFIG_SPARE_FLOWS] = NLA_POLICY_MAX(NLA_U32, 64),
};

/* CREM_CMD_FLOW_GET - do */
static const struct nla_policy crem_flow_get_nl_policy[CREM_A_FLOW_PEER + 1] = {
	[CREM_A_FLOW_ID] = { .type = NLA_U32, },
	[CREM_A_FLOW_SIDE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_PEER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
};

/* CREM_CMD_FLOW_DEL - do */
static const struct nla_policy crem_flow_del_nl_policy[CREM_A_FLOW_PEER + 1] = {
	[CREM_A_FLOW_ID] = { .type = NLA_U32, },
	[CREM_A_FLOW_SIDE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_PEER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
};

/* CREM_CMD_FLOW_SET - do */
static const struct nla_policy crem_flow_set_nl_policy[CREM_A_FLOW_PINNED + 1] = {
	[CREM_A_FLOW_ID] = { .type = NLA_U32, },
	[CREM_A_FLOW_SIDE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_PEER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
	[CREM_A_FLOW_K] = { .type = NLA_U8, },
	[CREM_A_FLOW_M] = { .type = NLA_U8, },
	[CREM_A_FLOW_PINNED] = { .type = NLA_U8, },
};

/* CREM_CMD_FLOW_NEW - do */
static const struct nla_policy crem_flow_new_nl_policy[CREM_A_FLOW_KIND + 1] = {
	[CREM_A_FLOW_SRC] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
	[CREM_A_FLOW_DST] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
	[CREM_A_FLOW_DEST_QP] = { .type = NLA_U32, },
	[CREM_A_FLOW_SIDE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_KIND] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_K] = { .type = NLA_U8, },
	[CREM_A_FLOW_M] = { .type = NLA_U8, },
};

/* CREM_CMD_FLOW_RESET - do */
static const struct nla_policy crem_flow_reset_nl_policy[CREM_A_FLOW_PEER + 1] = {
	[CREM_A_FLOW_ID] = { .type = NLA_U32, },
	[CREM_A_FLOW_SIDE] = NLA_POLICY_MAX(NLA_U8, 1),
	[CREM_A_FLOW_PEER] = NLA_POLICY_VALIDATE_FN(NLA_BINARY, crem_nl_validate_addr, 16),
};

/* Ops table for crem */
const struct genl_split_ops crem_nl_ops[10] = {
	{
		.cmd	= CREM_CMD_CONFIG_GET,
		.doit	= crem_nl_config_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CREM_CMD_CONFIG_SET,
		.doit		= crem_nl_config_set_doit,
		.policy		= crem_config_set_nl_policy,
		.maxattr	= CREM_A_CONFIG_SPARE_FLOWS,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= CREM_CMD_STATS_GET,
		.doit	= crem_nl_stats_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= CREM_CMD_STATS_RESET,
		.doit	= crem_nl_stats_reset_doit,
		.flags	= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CREM_CMD_FLOW_GET,
		.doit		= crem_nl_flow_get_doit,
		.policy		= crem_flow_get_nl_policy,
		.maxattr	= CREM_A_FLOW_PEER,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= CREM_CMD_FLOW_GET,
		.dumpit	= crem_nl_flow_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= CREM_CMD_FLOW_DEL,
		.doit		= crem_nl_flow_del_doit,
		.policy		= crem_flow_del_nl_policy,
		.maxattr	= CREM_A_FLOW_PEER,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CREM_CMD_FLOW_SET,
		.doit		= crem_nl_flow_set_doit,
		.policy		= crem_flow_set_nl_policy,
		.maxattr	= CREM_A_FLOW_PINNED,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CREM_CMD_FLOW_NEW,
		.doit		= crem_nl_flow_new_doit,
		.policy		= crem_flow_new_nl_policy,
		.maxattr	= CREM_A_FLOW_KIND,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= CREM_CMD_FLOW_RESET,
		.doit		= crem_nl_flow_reset_doit,
		.policy		= crem_flow_reset_nl_policy,
		.maxattr	= CREM_A_FLOW_PEER,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group crem_nl_mcgrps[] = {
	[CREM_NLGRP_EVENTS] = { "events", },
};
