/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The `classes:` map: see classes.h. */
#include <stdlib.h>
#include <string.h>

#include "config/classes.h"
#include "lib/grow.h"
#include "lib/hash.h"

static uint64_t class_hash(const char *netns, const char *dev, uint32_t classid)
{
	uint64_t h = tcx_hash_bytes(0, netns, strlen(netns));

	h = tcx_hash_bytes(h, dev, strlen(dev));
	return tcx_hash_mix(h, classid);
}

struct tcx_class_entry *tcx_classes_add(struct tcx_classes *c)
{
	struct tcx_class_entry *e;

	if (c->n >= UINT32_MAX - 1 || tcx_grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 64) < 0)
		return NULL;
	free(c->slots);
	c->slots = NULL;
	c->n_slots = 0;
	e = &c->v[c->n++];
	memset(e, 0, sizeof(*e));
	e->netns = "";
	return e;
}

/* The slot of (netns, dev, classid): where its entry is, or the empty one
 * where it would go. */
static size_t slot_of(const struct tcx_classes *c, const char *netns, const char *dev,
                      uint32_t classid)
{
	size_t i, mask = c->n_slots - 1;

	/* n_slots >= 2 n: there is always an empty slot to stop at */
	for (i = class_hash(netns, dev, classid) & mask; c->slots[i] != UINT32_MAX;
	     i = (i + 1) & mask) {
		const struct tcx_class_entry *e = &c->v[c->slots[i]];

		if (e->classid == classid && !strcmp(e->dev, dev) && !strcmp(e->netns, netns))
			break;
	}
	return i;
}

int tcx_classes_index(struct tcx_classes *c, void (*dup)(void *arg, size_t i, size_t first),
                      void *arg)
{
	size_t i, n_slots = 2;

	free(c->slots);
	while (n_slots < 2 * c->n)
		n_slots <<= 1;
	c->slots = malloc(n_slots * sizeof(*c->slots));
	if (!c->slots) {
		c->n_slots = 0;
		return -1;
	}
	c->n_slots = n_slots;
	c->n_netns = 0;
	memset(c->slots, 0xff, n_slots * sizeof(*c->slots));
	for (i = 0; i < c->n; i++) {
		const struct tcx_class_entry *e = &c->v[i];
		size_t s = slot_of(c, e->netns, e->dev, e->classid);

		if (c->slots[s] != UINT32_MAX) {
			if (dup)
				dup(arg, i, c->slots[s]);
			continue;
		}
		c->slots[s] = (uint32_t)i;
		c->n_netns += e->netns[0] != '\0';
	}
	return 0;
}

const struct tcx_class_entry *tcx_classes_find(const struct tcx_classes *c, const char *netns,
                                               const char *dev, uint32_t classid)
{
	size_t s;

	if (!c->n_slots || !dev)
		return NULL;
	if (netns && netns[0] && c->n_netns) {
		s = slot_of(c, netns, dev, classid);
		if (c->slots[s] != UINT32_MAX)
			return &c->v[c->slots[s]];
	}
	s = slot_of(c, "", dev, classid);
	return c->slots[s] != UINT32_MAX ? &c->v[c->slots[s]] : NULL;
}

/* x (at most 0xffff) in lower-case hex at p; returns the end. */
static char *put_hex(char *p, unsigned x)
{
	int shift = 12;

	while (shift > 0 && !(x >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = "0123456789abcdef"[(x >> shift) & 0xf];
	return p;
}

/* By hand, not snprintf(): it runs once per entry loaded, and snprintf()
 * made 7% of a load. */
void tcx_class_key_format(const struct tcx_class_entry *e, char *out)
{
	size_t ns = strnlen(e->netns, 63), dev = strnlen(e->dev, TCX_CLASS_DEV_MAX - 1);
	char *p = out;

	memcpy(p, e->netns, ns);
	p += ns;
	if (ns)
		*p++ = '/';
	memcpy(p, e->dev, dev);
	p += dev;
	*p++ = ' ';
	p = put_hex(p, e->classid >> 16);
	*p++ = ':';
	p = put_hex(p, e->classid & 0xffff);
	*p = '\0';
}

void tcx_classes_free(struct tcx_classes *c)
{
	free(c->v);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
