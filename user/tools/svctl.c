// SPDX-License-Identifier: GPL-2.0
/*
 * svctl: manage softverbs devices over the "softverbs" generic netlink
 * family (uapi/softverbs-netlink.h), on libmnl.
 *
 *   svctl [-j] [-p] link add NAME netdev DEV | link del NAME | link show [NAME]
 *   svctl [-j] [-p] dev set NAME {idle_us N | part_id N | vendor_id N |
 *                                 max_qp N ...}... |
 *                   dev show [NAME]
 *   svctl [-j] [-p] res show [pd|mr|cq|qp|flow|wq|rwq_ind_tbl|counters|flow_matcher|
 *                                steer_table|steer_anchor]
 *                            [dev NAME]
 *   svctl [-j] [-p] stat show [dev NAME]
 *
 * Errors go to stderr as "Error: <message>." with the kernel's extended
 * ack message when there is one; the exit code is 0 on success and 1 on
 * any failure (usage or kernel), as iproute2's rdma tool does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "softverbs-abi.h"
#include "softverbs-netlink.h"

#define SVCTL_VERSION	"1.0.0"

static bool json, pretty;
static struct mnl_socket *nl;
static unsigned int portid;
static uint16_t family_id;
/* Room for the largest message a dump may send (netlink caps it at 32k). */
#define BUF_SIZE	32768
static char *buf;

/* ---- errors ---- */

static void error_msg(const char *fmt, ...)
{
	char msg[512];
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	len = strlen(msg);
	/* As iproute2 prints an extack message: one sentence. */
	fprintf(stderr, "Error: %s%s\n", msg,
		len && msg[len - 1] != '.' ? "." : "");
}

static int usage(FILE *out)
{
	fprintf(out,
		"Usage: svctl [OPTIONS] OBJECT COMMAND [ARGS]\n"
		"  svctl link add NAME netdev DEV\n"
		"  svctl link del NAME\n"
		"  svctl link show [[dev] NAME]\n"
		"  svctl dev set NAME [idle_us MICROSECONDS] [part_id ID] [vendor_id ID]\n"
		"                [max_pd|max_mr|max_cq|max_qp|max_srq|max_ah N]\n"
		"                [max_qp_wr|max_cqe|max_srq_wr N]\n"
		"  svctl dev show [[dev] NAME]\n"
		"  svctl res show [pd|mr|cq|qp|flow|wq|rwq_ind_tbl|counters|flow_matcher|\n"
		"                 steer_table|steer_anchor] [dev NAME]\n"
		"  svctl stat show [[dev] NAME]\n"
		"OPTIONS: -j (--json), -p (--pretty), -V (--version), -h (--help)\n");
	return out == stdout ? 0 : 1;
}

/* ---- a record: printed as "key value ..." or as a JSON object ---- */

#define MAX_FIELDS 48

/* A string, a number, or a list of numbers (str: "1,2,3"; JSON [1,2,3]). */
struct field {
	const char *key;
	bool is_str;
	bool is_list;
	char str[192];
	uint64_t num;
};

struct record {
	unsigned int n;
	struct field f[MAX_FIELDS];
};

static unsigned int nrecords;

static void rec_str(struct record *r, const char *key, const char *val)
{
	struct field *f;
	size_t len;

	if (r->n == MAX_FIELDS)
		return;
	f = &r->f[r->n++];
	len = strnlen(val, sizeof(f->str) - 1);
	f->key = key;
	f->is_str = true;
	f->is_list = false;
	memcpy(f->str, val, len);
	f->str[len] = 0;
}

static void rec_num(struct record *r, const char *key, uint64_t val)
{
	struct field *f;

	if (r->n == MAX_FIELDS)
		return;
	f = &r->f[r->n++];
	f->key = key;
	f->is_str = false;
	f->is_list = false;
	f->num = val;
}

static void rec_list(struct record *r, const char *key, const uint32_t *v,
		     unsigned int n)
{
	struct field *f;
	size_t len = 0;
	unsigned int i;

	if (r->n == MAX_FIELDS)
		return;
	f = &r->f[r->n++];
	f->key = key;
	f->is_str = true;
	f->is_list = true;
	f->str[0] = 0;
	for (i = 0; i < n && len < sizeof(f->str); i++)
		len += snprintf(f->str + len, sizeof(f->str) - len, "%s%u",
				i ? "," : "", v[i]);
}

/*
 * A record's output is built in memory and written with one call: a dump
 * of 100,000 flows is 100,000 records, and stdio calls per character or
 * per field cost more than the kernel's side of the dump.
 */
static struct {
	char b[65536];		/* > MAX_FIELDS fields of 6 x 192 bytes */
	size_t n;
} out;

static void out_put(const char *s, size_t len)
{
	if (out.n + len <= sizeof(out.b)) {
		memcpy(out.b + out.n, s, len);
		out.n += len;
	}
}

static void out_str(const char *s)
{
	out_put(s, strlen(s));
}

static void out_u64(uint64_t v)
{
	char t[20];
	size_t i = sizeof(t);

	do {
		t[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	out_put(t + i, sizeof(t) - i);
}

static void out_flush(void)
{
	fwrite(out.b, 1, out.n, stdout);
	out.n = 0;
}

static void json_string(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const char *run = s;

	out_put("\"", 1);
	for (; *s; s++) {
		unsigned char c = *s;
		char esc[6] = { '\\', 'u', '0', '0' };

		if (c != '"' && c != '\\' && c >= 0x20)
			continue;
		out_put(run, s - run);
		run = s + 1;
		if (c >= 0x20) {
			esc[1] = c;
			out_put(esc, 2);
		} else {
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			out_put(esc, 6);
		}
	}
	out_put(run, s - run);
	out_put("\"", 1);
}

static void json_begin(void)
{
	if (json)
		fputs(pretty ? "[\n" : "[", stdout);
}

static void json_end(void)
{
	if (json)
		fputs(pretty && nrecords ? "\n]\n" : "]\n", stdout);
}

static void rec_print(const struct record *r)
{
	unsigned int i;

	if (!json) {
		for (i = 0; i < r->n; i++) {
			const struct field *f = &r->f[i];

			if (i)
				out_put(" ", 1);
			out_str(f->key);
			out_put(" ", 1);
			if (f->is_str)
				out_str(f->str);
			else
				out_u64(f->num);
		}
		out_put("\n", 1);
		out_flush();
		nrecords++;
		return;
	}
	if (nrecords)
		out_str(pretty ? ",\n" : ",");
	out_str(pretty ? "  {\n" : "{");
	for (i = 0; i < r->n; i++) {
		const struct field *f = &r->f[i];

		if (pretty)
			out_str("    ");
		json_string(f->key);
		out_str(pretty ? ": " : ":");
		if (f->is_list) {
			out_put("[", 1);
			out_str(f->str);
			out_put("]", 1);
		} else if (f->is_str) {
			json_string(f->str);
		} else {
			out_u64(f->num);
		}
		if (i + 1 < r->n)
			out_put(",", 1);
		if (pretty)
			out_put("\n", 1);
	}
	out_str(pretty ? "  }" : "}");
	out_flush();
	nrecords++;
}

/* ---- netlink ---- */

struct reply {
	int (*cb)(const struct nlmsghdr *nlh, void *data);
	void *data;
	int error;		/* errno of a failed request */
	char msg[256];		/* its extack message */
};

/* Extended ack TLVs after the error code (NETLINK_CAP_ACK is on). */
static void parse_extack(const struct nlmsghdr *nlh, const void *tlvs,
			 struct reply *r)
{
	const struct nlattr *attr;
	size_t len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	len = (const char *)nlh + nlh->nlmsg_len - (const char *)tlvs;
	mnl_attr_for_each_payload(tlvs, len) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(r->msg, sizeof(r->msg), "%s",
				 mnl_attr_get_str(attr));
	}
}

static int cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	struct reply *r = data;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		r->error = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!err->error)
		return MNL_CB_STOP;	/* the ack */
	r->error = -err->error;
	parse_extack(nlh, err + 1, r);
	return MNL_CB_ERROR;
}

static int cb_done(const struct nlmsghdr *nlh, void *data)
{
	const int *err = mnl_nlmsg_get_payload(nlh);
	struct reply *r = data;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*err)) && *err < 0) {
		r->error = -*err;
		parse_extack(nlh, err + 1, r);
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

static int cb_data(const struct nlmsghdr *nlh, void *data)
{
	struct reply *r = data;

	return r->cb ? r->cb(nlh, r->data) : MNL_CB_OK;
}

/* Send a request and process replies until the ack or the dump's end. */
static int nl_talk(struct nlmsghdr *nlh, struct reply *r)
{
	mnl_cb_t ctl[NLMSG_DONE + 1] = {
		[NLMSG_ERROR] = cb_error,
		[NLMSG_DONE] = cb_done,
	};
	unsigned int seq = nlh->nlmsg_seq;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r->error = errno;
		return -1;
	}
	for (;;) {
		ret = mnl_socket_recvfrom(nl, buf, BUF_SIZE);
		if (ret < 0) {
			r->error = errno;
			return -1;
		}
		ret = mnl_cb_run2(buf, ret, seq, portid, cb_data, r, ctl,
				  MNL_ARRAY_SIZE(ctl));
		if (ret == MNL_CB_ERROR) {
			if (!r->error)
				r->error = errno ? errno : EPROTO;
			return -1;
		}
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static int report(struct reply *r)
{
	if (r->msg[0])
		error_msg("%s", r->msg);
	else
		error_msg("%s", strerror(r->error));
	return 1;
}

static struct nlmsghdr *msg_start(uint16_t type, uint16_t flags, uint8_t cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = (unsigned int)time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = type == GENL_ID_CTRL ? 1 : SV_NL_FAMILY_VERSION;
	return nlh;
}

static int cb_family(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *attr;

	(void)data;
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
			family_id = mnl_attr_get_u16(attr);
	}
	return MNL_CB_OK;
}

static int nl_open(void)
{
	struct reply r = { .cb = cb_family };
	struct nlmsghdr *nlh;
	int one = 1;

	buf = malloc(BUF_SIZE);
	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!buf || !nl) {
		error_msg("cannot open a generic netlink socket: %s",
			  strerror(errno));
		return 1;
	}
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		error_msg("cannot bind the netlink socket: %s",
			  strerror(errno));
		return 1;
	}
	portid = mnl_socket_get_portid(nl);

	nlh = msg_start(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, SV_NL_FAMILY_NAME);
	if (nl_talk(nlh, &r) || !family_id) {
		if (r.error == ENOENT || !family_id)
			error_msg("the softverbs module is not loaded (no \"%s\" generic netlink family)",
				  SV_NL_FAMILY_NAME);
		else
			report(&r);
		return 1;
	}
	return 0;
}

/* ---- attribute parsing ---- */

static const struct nlattr *tb[SV_NL_ATTR_MAX + 1];

static int cb_attr(const struct nlattr *attr, void *data)
{
	uint16_t type = mnl_attr_get_type(attr);

	(void)data;
	if (type <= SV_NL_ATTR_MAX)
		tb[type] = attr;
	return MNL_CB_OK;
}

static void parse(const struct nlmsghdr *nlh)
{
	memset(tb, 0, sizeof(tb));
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), cb_attr, NULL);
}

/* A string attribute, or "" when absent or malformed. */
static const char *get_str(int type)
{
	if (!tb[type] || mnl_attr_validate(tb[type], MNL_TYPE_NUL_STRING) < 0)
		return "";
	return mnl_attr_get_str(tb[type]);
}

static uint64_t get_num(int type)
{
	const struct nlattr *a = tb[type];

	if (!a)
		return 0;
	switch (mnl_attr_get_payload_len(a)) {
	case 1: return mnl_attr_get_u8(a);
	case 2: return mnl_attr_get_u16(a);
	case 4: return mnl_attr_get_u32(a);
	case 8: return mnl_attr_get_u64(a);
	}
	return 0;
}

static const char *port_state_name(unsigned int s)
{
	static const char * const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return s < 6 ? names[s] : "UNKNOWN";
}

static const char *qp_state_name(unsigned int s)
{
	static const char * const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return s < 7 ? names[s] : "UNKNOWN";
}

static const char *qp_type_name(unsigned int t)
{
	switch (t) {
	case SV_QPT_RC: return "RC";
	case SV_QPT_UC: return "UC";
	case SV_QPT_UD: return "UD";
	case SV_QPT_RAW_PACKET: return "RAW_PACKET";
	case SV_QPT_XRC_SEND: return "XRC_SEND";
	case SV_QPT_XRC_RECV: return "XRC_RECV";
	case SV_QPT_DRIVER: return "DRIVER";
	case SV_QPT_DCI: return "DCI";
	case SV_QPT_DCT: return "DCT";
	}
	return "UNKNOWN";
}

static const char *flow_type_name(unsigned int t)
{
	static const char * const names[] = {
		[SV_FLOW_ATTR_NORMAL] = "NORMAL",
		[SV_FLOW_ATTR_ALL_DEFAULT] = "ALL_DEFAULT",
		[SV_FLOW_ATTR_MC_DEFAULT] = "MC_DEFAULT",
		[SV_FLOW_ATTR_SNIFFER] = "SNIFFER",
	};

	return t < 4 ? names[t] : "UNKNOWN";
}

static const char *wq_state_name(unsigned int s)
{
	static const char * const names[] = {
		[SV_WQS_RESET] = "RESET",
		[SV_WQS_RDY] = "RDY",
		[SV_WQS_ERR] = "ERR",
	};

	return s < 3 ? names[s] : "UNKNOWN";
}

struct flag_name {
	uint32_t bit;
	const char *name;
};

static const struct flag_name flow_flags[] = {
	{ SV_FLOW_ATTR_FLAGS_ALLOW_LOOP_BACK, "ALLOW_LOOP_BACK" },
	{ SV_FLOW_ATTR_FLAGS_DONT_TRAP, "DONT_TRAP" },
	{ SV_FLOW_ATTR_FLAGS_EGRESS, "EGRESS" },
	{ 0, NULL },
};

static const struct flag_name wq_flags[] = {
	{ SV_WQ_FLAGS_CVLAN_STRIPPING, "CVLAN_STRIPPING" },
	{ SV_WQ_FLAGS_SCATTER_FCS, "SCATTER_FCS" },
	{ SV_WQ_FLAGS_DELAY_DROP, "DELAY_DROP" },
	{ SV_WQ_FLAGS_PCI_WRITE_END_PADDING, "PCI_WRITE_END_PADDING" },
	{ 0, NULL },
};

/* Flag names joined by ','; "none" for 0, unknown bits in hex. */
static void flags_str(char *s, size_t len, uint32_t v,
		      const struct flag_name *names)
{
	size_t used = 0;

	s[0] = 0;
	for (; names->name; names++) {
		if (!(v & names->bit))
			continue;
		used += snprintf(s + used, len - used, "%s%s",
				 used ? "," : "", names->name);
		v &= ~names->bit;
		if (used >= len)
			return;
	}
	if (v)
		snprintf(s + used, len - used, "%s0x%x", used ? "," : "", v);
	else if (!used)
		snprintf(s, len, "none");
}

/* ---- link / dev ---- */

/* The device limits dev set changes and dev show reports. */
static const struct {
	const char *name;
	int attr;
} limit_names[] = {
	{ "max_pd", SV_NL_ATTR_MAX_PD },
	{ "max_mr", SV_NL_ATTR_MAX_MR },
	{ "max_cq", SV_NL_ATTR_MAX_CQ },
	{ "max_qp", SV_NL_ATTR_MAX_QP },
	{ "max_srq", SV_NL_ATTR_MAX_SRQ },
	{ "max_ah", SV_NL_ATTR_MAX_AH },
	{ "max_qp_wr", SV_NL_ATTR_MAX_QP_WR },
	{ "max_cqe", SV_NL_ATTR_MAX_CQE },
	{ "max_srq_wr", SV_NL_ATTR_MAX_SRQ_WR },
};

/* The attribute of a limit's name; -1 if it is none. */
static int limit_attr(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(limit_names) / sizeof(limit_names[0]); i++)
		if (!strcmp(name, limit_names[i].name))
			return limit_names[i].attr;
	return -1;
}

static int cb_link(const struct nlmsghdr *nlh, void *data)
{
	struct record r;
	char s[64];
	uint64_t g;
	size_t i;

	(void)data;
	r.n = 0;	/* fields are written before they are read */
	parse(nlh);
	rec_str(&r, "dev", get_str(SV_NL_ATTR_DEV_NAME));
	rec_num(&r, "index", get_num(SV_NL_ATTR_DEV_INDEX));
	rec_num(&r, "port", get_num(SV_NL_ATTR_PORT));
	rec_str(&r, "state", port_state_name(get_num(SV_NL_ATTR_PORT_STATE)));
	rec_num(&r, "mtu", get_num(SV_NL_ATTR_ACTIVE_MTU));
	if (tb[SV_NL_ATTR_NDEV_NAME]) {
		rec_str(&r, "netdev", get_str(SV_NL_ATTR_NDEV_NAME));
		rec_num(&r, "netdev_index", get_num(SV_NL_ATTR_NDEV_INDEX));
		rec_num(&r, "netdev_mtu", get_num(SV_NL_ATTR_NDEV_MTU));
	}
	if (tb[SV_NL_ATTR_MAC] && mnl_attr_get_payload_len(tb[SV_NL_ATTR_MAC]) == 6) {
		const uint8_t *m = mnl_attr_get_payload(tb[SV_NL_ATTR_MAC]);

		snprintf(s, sizeof(s), "%02x:%02x:%02x:%02x:%02x:%02x",
			 m[0], m[1], m[2], m[3], m[4], m[5]);
		rec_str(&r, "mac", s);
	}
	g = get_num(SV_NL_ATTR_NODE_GUID);
	snprintf(s, sizeof(s), "%04x:%04x:%04x:%04x",
		 (unsigned int)(g >> 48) & 0xffff,
		 (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);
	rec_str(&r, "node_guid", s);
	rec_num(&r, "idle_us", get_num(SV_NL_ATTR_IDLE_US));
	if (tb[SV_NL_ATTR_PART_ID])
		rec_num(&r, "part_id", get_num(SV_NL_ATTR_PART_ID));
	if (tb[SV_NL_ATTR_VENDOR_ID])
		rec_num(&r, "vendor_id", get_num(SV_NL_ATTR_VENDOR_ID));
	for (i = 0; i < sizeof(limit_names) / sizeof(limit_names[0]); i++)
		if (tb[limit_names[i].attr])
			rec_num(&r, limit_names[i].name,
				get_num(limit_names[i].attr));
	rec_print(&r);
	return MNL_CB_OK;
}

static int cmd_link_show(const char *name)
{
	struct reply r = { .cb = cb_link };
	struct nlmsghdr *nlh;
	int ret;

	nlh = msg_start(family_id, name ? 0 : NLM_F_DUMP, SV_NL_CMD_LINK_GET);
	if (name)
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, name);
	json_begin();
	ret = nl_talk(nlh, &r);
	json_end();
	return ret ? report(&r) : 0;
}

static int simple_request(struct nlmsghdr *nlh)
{
	struct reply r = { 0 };

	return nl_talk(nlh, &r) ? report(&r) : 0;
}

static int cmd_link(int argc, char **argv)
{
	struct nlmsghdr *nlh;

	if (argc == 0 || !strcmp(argv[0], "show") || !strcmp(argv[0], "list")) {
		if (argc > 1 && !strcmp(argv[1], "dev"))
			argc--, argv++;
		if (argc > 2) {
			error_msg("unexpected argument \"%s\"", argv[2]);
			return 1;
		}
		return cmd_link_show(argc > 1 ? argv[1] : NULL);
	}
	if (!strcmp(argv[0], "add")) {
		if (argc != 4 || strcmp(argv[2], "netdev")) {
			error_msg("usage: svctl link add NAME netdev DEV");
			return 1;
		}
		nlh = msg_start(family_id, NLM_F_CREATE | NLM_F_EXCL,
				SV_NL_CMD_LINK_ADD);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, argv[1]);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_NDEV_NAME, argv[3]);
		return simple_request(nlh);
	}
	if (!strcmp(argv[0], "del") || !strcmp(argv[0], "delete")) {
		if (argc != 2) {
			error_msg("usage: svctl link del NAME");
			return 1;
		}
		nlh = msg_start(family_id, 0, SV_NL_CMD_LINK_DEL);
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, argv[1]);
		return simple_request(nlh);
	}
	error_msg("unknown link command \"%s\", try \"svctl help\"", argv[0]);
	return 1;
}

static int cmd_dev(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	unsigned long v;
	char *end;
	int i;

	if (argc == 0 || !strcmp(argv[0], "show") || !strcmp(argv[0], "list"))
		return cmd_link(argc, argv);
	if (strcmp(argv[0], "set")) {
		error_msg("unknown dev command \"%s\", try \"svctl help\"",
			  argv[0]);
		return 1;
	}
	if (argc < 4 || argc % 2) {
		error_msg("usage: svctl dev set NAME [idle_us MICROSECONDS] [part_id ID] [max_qp N] ...");
		return 1;
	}
	nlh = msg_start(family_id, 0, SV_NL_CMD_DEV_SET);
	mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, argv[1]);
	for (i = 2; i < argc; i += 2) {
		int attr;

		if (!strcmp(argv[i], "idle_us")) {
			attr = SV_NL_ATTR_IDLE_US;
		} else if (!strcmp(argv[i], "part_id")) {
			attr = SV_NL_ATTR_PART_ID;
		} else if (!strcmp(argv[i], "vendor_id")) {
			attr = SV_NL_ATTR_VENDOR_ID;
		} else if ((attr = limit_attr(argv[i])) < 0) {
			error_msg("unknown device attribute \"%s\"", argv[i]);
			return 1;
		}
		errno = 0;
		v = strtoul(argv[i + 1], &end, 0);
		if (errno || *end || !argv[i + 1][0] || v > UINT32_MAX ||
		    argv[i + 1][0] == '-') {
			error_msg("invalid %s \"%s\"", argv[i], argv[i + 1]);
			return 1;
		}
		mnl_attr_put_u32(nlh, attr, v);
	}
	return simple_request(nlh);
}

/* ---- res ---- */

static const char * const res_names[] = {
	[SV_NL_RES_PD] = "pd",
	[SV_NL_RES_MR] = "mr",
	[SV_NL_RES_CQ] = "cq",
	[SV_NL_RES_QP] = "qp",
	[SV_NL_RES_FLOW] = "flow",
	[SV_NL_RES_WQ] = "wq",
	[SV_NL_RES_RWQ_IND_TBL] = "rwq_ind_tbl",
	[SV_NL_RES_COUNTERS] = "counters",
	[SV_NL_RES_FLOW_MATCHER] = "flow_matcher",
	[SV_NL_RES_STEER_TABLE] = "steer_table",
	[SV_NL_RES_STEER_ANCHOR] = "steer_anchor",
};

/* A counters object's flows (RES_FLOWS): into v, at most max; how many. */
static unsigned int get_flows(uint32_t *v, unsigned int max)
{
	const struct nlattr *a;
	unsigned int n = 0;

	if (!tb[SV_NL_ATTR_RES_FLOWS])
		return 0;
	mnl_attr_for_each_nested(a, tb[SV_NL_ATTR_RES_FLOWS]) {
		if (mnl_attr_get_type(a) == SV_NL_ATTR_RES_FLOW_HANDLE &&
		    mnl_attr_validate(a, MNL_TYPE_U32) >= 0 && n < max)
			v[n++] = mnl_attr_get_u32(a);
	}
	return n;
}

static int cb_res(const struct nlmsghdr *nlh, void *data)
{
	struct record r;
	uint32_t flows[SV_NL_RES_FLOWS_MAX];
	unsigned int type, n;
	char s[128];

	(void)data;
	r.n = 0;	/* fields are written before they are read */
	parse(nlh);
	type = get_num(SV_NL_ATTR_RES_TYPE);
	rec_str(&r, "dev", get_str(SV_NL_ATTR_DEV_NAME));
	rec_str(&r, "type", type <= SV_NL_RES_MAX && type ? res_names[type] :
		"?");
	rec_num(&r, "handle", get_num(SV_NL_ATTR_RES_HANDLE));
	switch (type) {
	case SV_NL_RES_MR:
		/* Keys and addresses come only to CAP_NET_ADMIN. */
		if (tb[SV_NL_ATTR_RES_LKEY]) {
			snprintf(s, sizeof(s), "0x%" PRIx64,
				 get_num(SV_NL_ATTR_RES_LKEY));
			rec_str(&r, "lkey", s);
		}
		if (tb[SV_NL_ATTR_RES_RKEY]) {
			snprintf(s, sizeof(s), "0x%" PRIx64,
				 get_num(SV_NL_ATTR_RES_RKEY));
			rec_str(&r, "rkey", s);
		}
		if (tb[SV_NL_ATTR_RES_IOVA]) {
			snprintf(s, sizeof(s), "0x%" PRIx64,
				 get_num(SV_NL_ATTR_RES_IOVA));
			rec_str(&r, "iova", s);
		}
		if (tb[SV_NL_ATTR_RES_LENGTH])
			rec_num(&r, "length", get_num(SV_NL_ATTR_RES_LENGTH));
		break;
	case SV_NL_RES_CQ:
		rec_num(&r, "cqe", get_num(SV_NL_ATTR_RES_CQE));
		break;
	case SV_NL_RES_QP:
		rec_num(&r, "qpn", get_num(SV_NL_ATTR_RES_QPN));
		rec_str(&r, "qp_type",
			qp_type_name(get_num(SV_NL_ATTR_RES_QP_TYPE)));
		rec_str(&r, "state",
			qp_state_name(get_num(SV_NL_ATTR_RES_QP_STATE)));
		break;
	case SV_NL_RES_FLOW:
		/* A drop or default-miss rule may have no QP. */
		if (tb[SV_NL_ATTR_RES_QPN])
			rec_num(&r, "qpn", get_num(SV_NL_ATTR_RES_QPN));
		else
			rec_str(&r, "qpn", "-");
		rec_str(&r, "flow_type",
			flow_type_name(get_num(SV_NL_ATTR_RES_FLOW_TYPE)));
		rec_num(&r, "priority", get_num(SV_NL_ATTR_RES_FLOW_PRIORITY));
		flags_str(s, sizeof(s), get_num(SV_NL_ATTR_RES_FLOW_FLAGS),
			  flow_flags);
		rec_str(&r, "flags", s);
		rec_num(&r, "specs", get_num(SV_NL_ATTR_RES_FLOW_NSPECS));
		/* Actions: a tag, a drop, a counters object, if any. */
		if (tb[SV_NL_ATTR_RES_FLOW_TAG]) {
			snprintf(s, sizeof(s), "0x%" PRIx64,
				 get_num(SV_NL_ATTR_RES_FLOW_TAG));
			rec_str(&r, "tag", s);
		}
		rec_str(&r, "drop", tb[SV_NL_ATTR_RES_FLOW_DROP] ? "yes" : "no");
		if (tb[SV_NL_ATTR_RES_FLOW_MISS])
			rec_str(&r, "default_miss", "yes");
		if (tb[SV_NL_ATTR_RES_MATCHER_HANDLE])
			rec_num(&r, "matcher",
				get_num(SV_NL_ATTR_RES_MATCHER_HANDLE));
		if (tb[SV_NL_ATTR_RES_DEST_TABLE])
			rec_num(&r, "dest_table",
				get_num(SV_NL_ATTR_RES_DEST_TABLE));
		if (tb[SV_NL_ATTR_RES_DEST_ANCHOR])
			rec_num(&r, "dest_anchor",
				get_num(SV_NL_ATTR_RES_DEST_ANCHOR));
		if (tb[SV_NL_ATTR_RES_COUNTERS_HANDLE])
			rec_num(&r, "counters",
				get_num(SV_NL_ATTR_RES_COUNTERS_HANDLE));
		break;
	case SV_NL_RES_WQ:
		rec_num(&r, "wqn", get_num(SV_NL_ATTR_RES_WQN));
		rec_str(&r, "state",
			wq_state_name(get_num(SV_NL_ATTR_RES_WQ_STATE)));
		rec_num(&r, "cq", get_num(SV_NL_ATTR_RES_CQ_HANDLE));
		flags_str(s, sizeof(s), get_num(SV_NL_ATTR_RES_WQ_FLAGS),
			  wq_flags);
		rec_str(&r, "flags", s);
		break;
	case SV_NL_RES_RWQ_IND_TBL:
		n = get_num(SV_NL_ATTR_RES_LOG_SIZE);
		rec_num(&r, "size", n < 32 ? 1U << n : 0);
		rec_num(&r, "log_size", n);
		break;
	case SV_NL_RES_FLOW_MATCHER:
		rec_num(&r, "priority", get_num(SV_NL_ATTR_RES_FLOW_PRIORITY));
		flags_str(s, sizeof(s), get_num(SV_NL_ATTR_RES_FLOW_FLAGS),
			  flow_flags);
		rec_str(&r, "flags", s);
		rec_num(&r, "table", get_num(SV_NL_ATTR_RES_TABLE_HANDLE));
		break;
	case SV_NL_RES_STEER_TABLE:
	case SV_NL_RES_STEER_ANCHOR:
		flags_str(s, sizeof(s), get_num(SV_NL_ATTR_RES_FLOW_FLAGS),
			  flow_flags);
		rec_str(&r, "flags", s);
		if (type == SV_NL_RES_STEER_TABLE)
			rec_num(&r, "level",
				get_num(SV_NL_ATTR_RES_TABLE_LEVEL));
		else
			rec_num(&r, "priority",
				get_num(SV_NL_ATTR_RES_FLOW_PRIORITY));
		break;
	case SV_NL_RES_COUNTERS:
		n = get_flows(flows, SV_NL_RES_FLOWS_MAX);
		rec_str(&r, "attached", n ? "yes" : "no");
		if (n)
			rec_list(&r, "flows", flows, n);
		break;
	}
	rec_num(&r, "users", get_num(SV_NL_ATTR_RES_USECNT));
	rec_num(&r, "pid", get_num(SV_NL_ATTR_RES_PID));
	rec_str(&r, "comm", get_str(SV_NL_ATTR_RES_COMM));
	rec_print(&r);
	return MNL_CB_OK;
}

static int res_dump(unsigned int type, const char *dev)
{
	struct reply r = { .cb = cb_res };
	struct nlmsghdr *nlh;

	nlh = msg_start(family_id, NLM_F_DUMP, SV_NL_CMD_RES_GET);
	mnl_attr_put_u8(nlh, SV_NL_ATTR_RES_TYPE, type);
	if (dev)
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, dev);
	return nl_talk(nlh, &r) ? report(&r) : 0;
}

static int cmd_res(int argc, char **argv)
{
	unsigned int type = 0, t;
	const char *dev = NULL;
	int i, ret = 0;

	if (argc && (!strcmp(argv[0], "show") || !strcmp(argv[0], "list")))
		argc--, argv++;
	else if (argc) {
		error_msg("unknown res command \"%s\", try \"svctl help\"",
			  argv[0]);
		return 1;
	}
	for (i = 0; i < argc; i++) {
		for (t = 1; t <= SV_NL_RES_MAX; t++)
			if (!strcmp(argv[i], res_names[t]))
				break;
		if (t <= SV_NL_RES_MAX && !type) {
			type = t;
		} else if (!strcmp(argv[i], "dev") && i + 1 < argc && !dev) {
			dev = argv[++i];
		} else {
			error_msg("unexpected argument \"%s\"", argv[i]);
			return 1;
		}
	}
	json_begin();
	for (t = 1; t <= SV_NL_RES_MAX && !ret; t++)
		if (!type || t == type)
			ret = res_dump(t, dev);
	json_end();
	return ret;
}

/* ---- stat ---- */

static int cb_stat(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *entry, *a;
	struct record r;

	(void)data;
	r.n = 0;	/* fields are written before they are read */
	parse(nlh);
	rec_str(&r, "dev", get_str(SV_NL_ATTR_DEV_NAME));
	rec_num(&r, "port", get_num(SV_NL_ATTR_PORT));
	if (tb[SV_NL_ATTR_STATS]) {
		mnl_attr_for_each_nested(entry, tb[SV_NL_ATTR_STATS]) {
			const char *name = NULL;
			uint64_t value = 0;

			mnl_attr_for_each_nested(a, entry) {
				if (mnl_attr_get_type(a) == SV_NL_ATTR_STAT_NAME &&
				    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
					name = mnl_attr_get_str(a);
				else if (mnl_attr_get_type(a) == SV_NL_ATTR_STAT_VALUE &&
					 mnl_attr_validate(a, MNL_TYPE_U64) >= 0)
					value = mnl_attr_get_u64(a);
			}
			/* The names live in the message: keys point there. */
			if (name)
				rec_num(&r, name, value);
		}
	}
	rec_print(&r);
	return MNL_CB_OK;
}

static int cmd_stat(int argc, char **argv)
{
	struct reply r = { .cb = cb_stat };
	const char *dev = NULL;
	struct nlmsghdr *nlh;
	int ret;

	if (argc && (!strcmp(argv[0], "show") || !strcmp(argv[0], "list")))
		argc--, argv++;
	else if (argc) {
		error_msg("unknown stat command \"%s\", try \"svctl help\"",
			  argv[0]);
		return 1;
	}
	if (argc == 2 && !strcmp(argv[0], "dev")) {
		dev = argv[1];
	} else if (argc == 1 && strcmp(argv[0], "dev")) {
		dev = argv[0];
	} else if (argc) {
		error_msg("usage: svctl stat show [[dev] NAME]");
		return 1;
	}
	nlh = msg_start(family_id, dev ? 0 : NLM_F_DUMP, SV_NL_CMD_STAT_GET);
	if (dev)
		mnl_attr_put_strz(nlh, SV_NL_ATTR_DEV_NAME, dev);
	json_begin();
	ret = nl_talk(nlh, &r);
	json_end();
	return ret ? report(&r) : 0;
}

int main(int argc, char **argv)
{
	static char obuf[1 << 16];
	const char *obj;

	/* Big dumps into a pipe: 64 KiB writes, not 4 KiB ones. */
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	while (argc > 1 && argv[1][0] == '-') {
		const char *o = argv[1];

		if (!strcmp(o, "-j") || !strcmp(o, "--json")) {
			json = true;
		} else if (!strcmp(o, "-p") || !strcmp(o, "--pretty")) {
			pretty = true;
		} else if (!strcmp(o, "-jp") || !strcmp(o, "-pj")) {
			json = pretty = true;
		} else if (!strcmp(o, "-V") || !strcmp(o, "--version")) {
			printf("svctl %s\n", SVCTL_VERSION);
			return 0;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			return usage(stdout);
		} else {
			error_msg("unknown option \"%s\", try \"svctl help\"", o);
			return 1;
		}
		argc--, argv++;
	}
	if (argc < 2)
		return usage(stderr);
	obj = argv[1];
	if (!strcmp(obj, "help"))
		return usage(stdout);
	if (strcmp(obj, "link") && strcmp(obj, "dev") && strcmp(obj, "res") &&
	    strcmp(obj, "stat")) {
		error_msg("object \"%s\" is unknown, try \"svctl help\"", obj);
		return 1;
	}
	if (nl_open())
		return 1;
	argc -= 2;
	argv += 2;
	if (!strcmp(obj, "link"))
		return cmd_link(argc, argv);
	if (!strcmp(obj, "dev"))
		return cmd_dev(argc, argv);
	if (!strcmp(obj, "res"))
		return cmd_res(argc, argv);
	return cmd_stat(argc, argv);
}
