/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The `classes:` map: a TC class, by namespace, device and class id, to its
 * user label values. The entries, their index and the lookup; config/config.c
 * reads them from the YAML, checks their keys and reports what is wrong. No
 * dependencies but lib/. */
#ifndef TCX_CLASSES_H
#define TCX_CLASSES_H

#include <stddef.h>
#include <stdint.h>

#define TCX_CLASS_DEV_MAX 16 /* IFNAMSIZ: 15 characters and a NUL */
/* The longest key as tcx_class_key_format() writes it, with its NUL: a
 * netns of 63, '/', a device of 15, ' ', "ffff:ffff". */
#define TCX_CLASS_KEY_MAX (63 + 1 + 15 + 1 + 9 + 1)

/* One entry: "DEV CLASSID" applies in every namespace, "NETNS/DEV CLASSID"
 * in the named namespace NETNS only, where it wins over the other. */
struct tcx_class_entry {
	uint32_t classid; /* major << 16 | minor, both 1 to 0xffff */
	char dev[TCX_CLASS_DEV_MAX];
	const char *netns;   /* "": every namespace */
	const char **values; /* one per label of the configuration */
};

struct tcx_classes {
	struct tcx_class_entry *v;
	size_t n, cap;
	size_t n_netns;  /* entries with a netns */
	uint32_t *slots; /* open addressing into v[], UINT32_MAX: empty */
	size_t n_slots;  /* a power of two >= 2 n; 0 until tcx_classes_index() */
};

/* A new entry at the end of c->v, zeroed but for netns (""), or NULL when out
 * of memory or past UINT32_MAX - 1 entries. Drops the index. */
struct tcx_class_entry *tcx_classes_add(struct tcx_classes *c);

/* Index c->v once it is complete. An entry with the namespace, device and
 * class id of an earlier one is left out of the index and handed to dup(arg,
 * i, first) (NULL: to nothing). Returns 0, or -1 when out of memory (then
 * nothing is found). */
int tcx_classes_index(struct tcx_classes *c, void (*dup)(void *arg, size_t i, size_t first),
                      void *arg);

/* The entry for class classid of device dev in namespace netns (NULL or "":
 * the collector's own): that of NETNS/DEV CLASSID, else that of DEV CLASSID,
 * else NULL. Two probes at most; allocates nothing. */
const struct tcx_class_entry *tcx_classes_find(const struct tcx_classes *c, const char *netns,
                                               const char *dev, uint32_t classid);

/* The key of an entry as tc writes a class id: "DEV MAJ:MIN" or
 * "NETNS/DEV MAJ:MIN", lower-case hex without leading zeros. out holds
 * TCX_CLASS_KEY_MAX bytes. */
void tcx_class_key_format(const struct tcx_class_entry *e, char *out);

/* Free the arrays (not the strings netns and values point to). */
void tcx_classes_free(struct tcx_classes *c);

#endif
