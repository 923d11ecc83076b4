/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tcexporter configuration: the YAML schema, loaded with libyaml. */
#ifndef TCX_CONFIG_H
#define TCX_CONFIG_H

#include <linux/pkt_sched.h>
#include <regex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config/xstats.h"
#include "config/families.h"
#include "config/classes.h"
#include "config/errfn.h"
#include "lib/arena.h"

#define TCX_COOKIE_MAX      16 /* TC_COOKIE_MAX_SIZE in <linux/pkt_cls.h> */
#define TCX_MAX_LABELS      32 /* user labels per row */
#define TCX_MAX_FIELDS      16 /* fields of one `fields` decoder */
#define TCX_LABEL_VALUE_MAX 64 /* longest value a decoder can produce */

enum tcx_unmapped_policy {
	TCX_UNMAPPED_EXPORT = 0, /* export the row, user labels empty */
	TCX_UNMAPPED_DROP,       /* drop rows whose cookie maps to nothing */
};

/* The parents of a clsact qdisc's two filter lists (an ingress qdisc's one
 * is TCX_PARENT_INGRESS too), as the kernel dumps them and as a target's
 * `parent: ingress|egress` means them. */
#define TCX_PARENT_INGRESS TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS) /* 0xFFFFFFF2 */
#define TCX_PARENT_EGRESS  TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)  /* 0xFFFFFFF3 */

/* The parent of a device's filter as the collector names its dump unit.
 * The kernel echoes the parent of a request, and the filter list of an
 * ingress or clsact qdisc answers to several: ffff:, ffff:fff1 and
 * ffff:fff2 (`tc ... ingress`) for ingress, ffff:fff3 for egress. */
static inline uint32_t tcx_unit_parent(uint32_t parent)
{
	if (TC_H_MAJ(parent) != TC_H_MAJ(TC_H_INGRESS))
		return parent;
	return TC_H_MIN(parent) == TC_H_MIN_EGRESS ? TCX_PARENT_EGRESS : TCX_PARENT_INGRESS;
}

/* Where `ip netns add NAME` puts a named network namespace. */
#define TCX_NETNS_DIR "/run/netns"

/* One `targets:` entry. */
struct tcx_target_cfg {
	int all;          /* `all: true`: every qdisc and shared block */
	char *dev;        /* device name, or NULL */
	int has_parent;   /* a parent was given */
	uint32_t parent;  /* TC handle: TCX_PARENT_INGRESS/EGRESS, 0 (root) or maj:min */
	char *parent_str; /* as written: "ingress", "egress", "root", "1:" */
	int has_block;
	uint32_t block; /* shared block index */
	char *netns;    /* named netns (/run/netns/NAME), or NULL */
	int netns_glob; /* netns is an fnmatch(3) pattern (it has *, ? or [) */
	int line;       /* where it was written, for messages (1-based, 0 = built in) */
};

enum tcx_decoder_type {
	TCX_DEC_ASCII = 0, /* cookie bytes are printable ASCII, used as is */
	TCX_DEC_FIELDS,    /* fixed-width big-endian unsigned integers */
	TCX_DEC_UUID,      /* 16 bytes rendered as a UUID */
};

enum tcx_uuid_layout {
	TCX_UUID_OVS = 0, /* OVS ufid: four host-order u32 words (as ovs-appctl prints) */
	TCX_UUID_RFC4122, /* bytes in order */
};

struct tcx_field {
	int label;      /* index into labels[], or -1 for padding */
	unsigned width; /* bytes, 1..8 */
};

struct tcx_decoder {
	enum tcx_decoder_type type;
	unsigned length; /* match only cookies of this length (0 = any) */
	uint8_t prefix[TCX_COOKIE_MAX];
	unsigned prefix_len; /* match only cookies starting with prefix */
	int label;           /* ascii, uuid: the label it fills */
	enum tcx_uuid_layout layout;
	struct tcx_field fields[TCX_MAX_FIELDS];
	unsigned n_fields;
	int line;
};

struct tcx_cookie_entry {
	uint8_t len;
	uint8_t bytes[TCX_COOKIE_MAX];
	char **values; /* n_labels strings, never NULL */
};

#define TCX_MAX_LISTEN     8
#define TCX_LISTEN_DEFAULT "[::]:9591"

/* The `http:` section (the daemon's /metrics server). */
struct tcx_http_cfg {
	char *listen[TCX_MAX_LISTEN]; /* "[::]:9591", "127.0.0.1:9591", ":9591" */
	size_t n_listen;
	char *web_config;         /* exporter-toolkit web config file, or NULL */
	unsigned max_connections; /* per listen address */
	unsigned max_connections_per_ip;
	double timeout_s; /* idle connections, and requests not complete, are closed after it */
	/* What answers still being sent may hold of collections replaced
	 * since they began, in MiB: beyond it, the readers of the oldest are
	 * closed. */
	unsigned max_stale_mib;
	/* Renders of /metrics on demand (variants not rendered ahead) a
	 * collection may have, per client address and in all. */
	unsigned renders_per_ip, renders;
	/* Password checks that may wait for the checker, per client address
	 * and in all. */
	unsigned password_checks_per_ip, password_checks;
};

/* The `snmp:` section (the AgentX subagent). */
struct tcx_snmp_cfg {
	int enabled;
	char *agentx_socket; /* NULL: net-snmp's default (/var/agentx/master) */
	int ping_interval_s; /* default 5 */
};

/* The `devices:` section: which devices `all` targets collect (every one
 * by default). POSIX extended regexes on the device name. */
struct tcx_devices_cfg {
	int has_include, has_exclude;
	regex_t include, exclude; /* REG_EXTENDED | REG_NOSUB */
};

/* The built-in labels of an action row, in the order they are written
 * (device and parent, or block; netns only when set). */
enum tcx_builtin_label {
	TCX_BL_DEVICE = 0,
	TCX_BL_PARENT,
	TCX_BL_BLOCK,
	TCX_BL_NETNS,
	TCX_BL_CHAIN,
	TCX_BL_PROTOCOL,
	TCX_BL_PREF,
	TCX_BL_KIND,
	TCX_BL_HANDLE,
	TCX_BL_ORDER,
	TCX_BL_ACTION,
	TCX_BL_COOKIE,
	TCX_BL__MAX,
};
extern const char *const tcx_builtin_labels[TCX_BL__MAX];

/* The `aggregate:` section: which labels of the action rows are kept. */
enum tcx_agg_mode {
	TCX_AGG_NONE = 0, /* no aggregation: one series per action row */
	TCX_AGG_BY,       /* `by: [...]` */
	TCX_AGG_WITHOUT,  /* `without: [...]` */
};
struct tcx_aggregate_cfg {
	enum tcx_agg_mode mode;
	uint32_t builtin; /* bit i: tcx_builtin_labels[i] is kept */
	uint32_t user;    /* bit i: labels[i] is kept */
};

/* The `families:` section: each switch as set (collectors/counters.h), and
 * the per-kind statistics chosen by field (`xstats:` as a map of kinds;
 * all zero: every field). */
struct tcx_families_cfg {
	enum tcx_family_mode mode[TCX_SW__MAX];
	struct tcx_xstats_choice xstats;
};

struct tcx_config {
	atomic_uint refcnt;
	char *path;        /* file it came from, "<default>" for the embedded one */
	double interval_s; /* daemon collect interval */
	/* `liveness_interval`: terse targets dumped in full this often, for
	 * their action times (collect.h); 0: never. */
	double liveness_interval_s;
	/* `sweep_interval`: every qdisc and class asked for its filters this
	 * often (units.c, "sweeps"); 0: every collection. */
	double sweep_interval_s;
	unsigned long generation; /* from 1, one more for each configuration loaded */
	struct tcx_target_cfg *targets;
	size_t n_targets;
	char **labels;
	size_t n_labels;
	enum tcx_unmapped_policy unmapped;
	struct tcx_cookie_entry *cookies;
	size_t n_cookies;
	struct tcx_arena cookie_mem; /* the values of cookies[] and classes */
	uint32_t *slots;             /* open-addressing index into cookies[], UINT32_MAX = empty */
	size_t n_slots;              /* power of two */
	struct tcx_decoder *decoders;
	size_t n_decoders;
	struct tcx_classes classes; /* `classes:`, the user labels of TC classes */
	struct tcx_http_cfg http;
	struct tcx_snmp_cfg snmp;
	struct tcx_devices_cfg devices;
	char **warnings; /* "FILE:LINE:COL: message": accepted, but worth a word */
	size_t n_warnings;
	struct tcx_aggregate_cfg aggregate;
	struct tcx_families_cfg families;
	uint64_t max_series; /* series of the row families per scrape; 0: no cap */
	/* `notify_buffer_kib`: the receive buffer asked for on each deletion
	 * notification socket (collectors/notify.h), in KiB. */
	unsigned notify_buffer_kib;
};

/* notify_buffer_kib: the default (4 MiB) and the range accepted. */
#define TCX_NOTIFY_BUFFER_KIB_DEFAULT 4096u
#define TCX_NOTIFY_BUFFER_KIB_MIN     4u
#define TCX_NOTIFY_BUFFER_KIB_MAX     1048576u

/* Split a listen address into host ("" for any, brackets removed) and port.
 * Returns 0, or -1 when it is not HOST:PORT, [V6]:PORT or :PORT. */
int tcx_listen_split(const char *addr, char *host, size_t hostlen, unsigned *port);

/* Command-line overrides of the `http:` section (--web.listen-address,
 * --web.config.file): what they set replaces the file's, at every load. */
struct tcx_http_override {
	const char *listen[TCX_MAX_LISTEN]; /* each checked by tcx_listen_split() */
	size_t n_listen;                    /* 0: the file's */
	const char *web_config;             /* NULL: the file's */
};
/* Apply o (NULL: nothing) to cfg, freshly loaded and not yet shared.
 * Returns 0, or -ENOMEM. */
int tcx_config_override_http(struct tcx_config *cfg, const struct tcx_http_override *o);

/* Load a config from the file at path, or from buf (len bytes; name is for
 * messages and relative file names; buf NULL reads the file name). Returns
 * NULL on error after reporting every problem found through errfn (at
 * least one). */
struct tcx_config *tcx_config_load_file(const char *path, tcx_config_err_fn errfn, void *arg);
struct tcx_config *tcx_config_load_buffer(const char *name, const char *buf, size_t len,
                                          tcx_config_err_fn errfn, void *arg);
/* The embedded default: collect `all` in the current namespace. */
struct tcx_config *tcx_config_default(void);
extern const char tcx_default_config_yaml[];

struct tcx_config *tcx_config_ref(struct tcx_config *cfg);
void tcx_config_unref(struct tcx_config *cfg);

/* Does `devices:` let `all` targets collect the device named dev? It does
 * when dev matches `include` (if given) and does not match `exclude` (if
 * given). */
int tcx_config_device_wanted(const struct tcx_config *cfg, const char *dev);

/* The names of the named network namespaces (TCX_NETNS_DIR) that glob
 * matches (fnmatch(3)), sorted, as a NULL-terminated array to free with
 * tcx_netns_names_free(); NULL, with errno set, when the directory cannot be
 * read (EMFILE, EACCES, ...) or out of memory (ENOMEM). A directory that
 * does not exist holds no names; a name longer than 63 bytes is left out. */
char **tcx_netns_glob(const char *glob);
void tcx_netns_names_free(char **names);

/* ---- cookie -> labels ------------------------------------------------------ */

enum tcx_map_kind {
	TCX_MAP_NONE = 0, /* no cookie on the action */
	TCX_MAP_EXACT,    /* found in `cookies:` */
	TCX_MAP_DECODED,  /* produced by a decoder */
	TCX_MAP_UNMAPPED, /* a cookie that nothing maps */
};

/* Scratch space for decoded label values, one per call. */
struct tcx_label_buf {
	char v[TCX_MAX_LABELS][TCX_LABEL_VALUE_MAX];
};

/* Resolve a cookie to label values. values[i] is set for every configured
 * label (to "" where nothing applies); strings point into cfg or buf and stay
 * valid until the next call with the same buf. */
enum tcx_map_kind tcx_labels_resolve(const struct tcx_config *cfg, const uint8_t *cookie,
                                     size_t len, const char **values, struct tcx_label_buf *buf);

/* Hash of a cookie, for the cookie index. */
uint64_t tcx_cookie_hash(const uint8_t *cookie, size_t len);

/* Lower-case hex of a cookie; out must hold 2*len+1 bytes. */
void tcx_cookie_hex(const uint8_t *cookie, size_t len, char *out);

/* ---- class -> labels ------------------------------------------------------- */

/* The `classes:` entry of class classid (major << 16 | minor) of device dev
 * in namespace netns (NULL or "": the collector's own): NETNS/DEV CLASSID,
 * else DEV CLASSID, else NULL. Its values[] hold one value per label
 * (cfg->n_labels), valid while cfg is. O(1), allocates nothing. A class
 * found has the label set of (TCX_MAP_EXACT, values), one per entry (its
 * index, e - cfg->classes.v, identifies it while cfg lives); one not found
 * has every value empty (TCX_MAP_NONE): `unmapped` applies to cookies only. */
static inline const struct tcx_class_entry *tcx_config_class_labels(const struct tcx_config *cfg,
                                                                    const char *netns,
                                                                    const char *dev,
                                                                    uint32_t classid)
{
	return tcx_classes_find(&cfg->classes, netns, dev, classid);
}

/* Label name checks shared with the renderers. */
int tcx_label_name_valid(const char *name);
/* A name the exposition writes itself (tcx_builtin_labels, then
 * tcx_reserved_labels): not a user label. */
int tcx_label_name_reserved(const char *name);
extern const char *const tcx_reserved_labels[];
extern const size_t tcx_n_reserved_labels;

#endif
