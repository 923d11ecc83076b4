/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTTP server: libmicrohttpd, one daemon per listen address, each with
 * its own small thread pool.
 *
 * /metrics serves the current exposition. Each of its variants is rendered
 * once (ahead of the first request when it is what is scraped: see struct
 * tcx_expo), into one MHD_Response that every request for that variant
 * queues: MHD reference-counts responses, so the bytes are sent from the one
 * buffer, and freed after the last connection that uses them ends, even when
 * a newer snapshot has been published meanwhile.
 *
 * Slow clients. libmicrohttpd's connection timeout measures inactivity only,
 * so a client sending one header byte per second holds its connection for
 * ever, and enough of them hold every slot. Here each connection is tracked
 * from libmicrohttpd's connection notifications (struct conn): until the
 * handler has the whole of a request (headers and body) it is on its
 * server's `waiting` list, oldest first, and
 *   - a request must be complete within `timeout` of the connection's start
 *     (or of the end of the previous response): a reaper thread closes the
 *     connections whose request is not;
 *   - max_connections is enforced here: a connection beyond it closes the
 *     oldest connection still waiting for a request from the same client
 *     address, else the oldest of all (the new one itself when every other
 *     one is being answered). So clients that send their request at once
 *     always find a slot, and a few addresses that keep reconnecting close
 *     their own connections, not the slot of a client that takes a while
 *     (a TLS handshake over a long path) to send its request. libmicrohttpd's own limit is set
 *     above it, for the connections closed here that its threads have not
 *     cleaned up yet.
 *
 * Slow readers. A connection sending an answer of /metrics holds a
 * reference to the exposition it is from (struct conn's expo; it is on the
 * servers' readers list, h->readers, oldest exposition first) until the answer
 * is done: a client that reads slowly keeps that collection (its snapshot,
 * the label text and the bodies rendered ahead) after a newer one is
 * published, and a reader opened every interval would keep one collection
 * each. So each time a collection is published (tcx_http_published()), the
 * collections replaced that answers still hold are counted, from the
 * newest; past max_stale_mib, the connections reading the older ones are
 * closed. The current collection is never counted: Prometheus's scrape,
 * which reads it at once, is never closed, nor one that spans a publication
 * while max_stale_mib holds a collection.
 *
 * "Closing" is shutdown() of the socket: the connection's thread sees the end
 * of the stream and closes it as if the client had. It is done under
 * `lock`, which the close notification also takes, and libmicrohttpd closes
 * the socket only after that notification, so the descriptor is still the
 * connection's.
 *
 * File descriptors. max_connections is lowered at start, so that those of
 * every listen address fit in RLIMIT_NOFILE (fit_fds()). When accept() fails
 * for want of descriptors all the same, the oldest connection waiting for
 * its request is closed (evict_for_fd()): libmicrohttpd's log is the one
 * place where that failure shows, so mhd_log() acts on it, and logs each of
 * libmicrohttpd's warnings at most once a minute.
 *
 * Password checks. A bcrypt takes tens of milliseconds (a second at the
 * highest cost) and runs in the web config's checker thread
 * (tcx_webconfig_check_start()): the connection is suspended until its
 * check ends (struct pending), so that its worker thread serves its other
 * connections meanwhile, and the check's callback resumes it. A suspended
 * connection goes back on its server's `waiting` list, as if its request
 * were not whole yet (from the time it was suspended): the reaper and
 * max_connections close it like any other, and closing it lets go of its
 * check (its client's token given back if it had not begun) and resumes it
 * (close_conn()). Checks that wait are bounded (TCX_AUTH_QUEUE_CLIENT,
 * TCX_AUTH_QUEUE_MAX): beyond, 429 at once. tcx_http_stop() lets go of the
 * checks under way and resumes their connections before it stops the
 * daemons, which must find none suspended.
 *
 * Renders on demand. A variant that is not rendered ahead is rendered for
 * each GET of it, as it is sent. A collection has renders_per_ip of those
 * per client address (as tcx_client_key() counts them) and `renders` in
 * all: a GET beyond them waits, suspended, for the next collection
 * (tcx_http_published() resumes it, and it is taken again from the top,
 * authorised already), and one that has waited once and finds none left
 * gets 429. So a client cycling through the variants gets at most
 * renders_per_ip renders an interval, and each of its connections at most
 * one refusal, not a refusal as fast as it can ask. A waiting connection is
 * on its server's `waiting` list, closed like one without a whole request.
 * A GET that waited does not mark its variant as asked of the collection it
 * is taken in (it was asked of the one before).
 *
 * Bodies rendered ahead. Sending one costs as much as a small render (a
 * millisecond a MB), so each address may also be sent only so many bytes of
 * them a collection (body_budget()); a GET beyond waits and is refused the
 * same way, counted under reason="bytes". Prometheus's scrape, one body an
 * interval, and HEAD, which renders nothing, are never held up. */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "agent/state.h"
#include "agent/http/http.h"
#include "agent/log.h"
#include "agent/render/page.h"
#include "agent/render/prom.h"
#include "build.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/list.h"

/* One connection (its socket context). */
struct conn {
	struct server *srv;
	struct MHD_Connection *mc;
	pthread_t thread; /* libmicrohttpd's thread that serves it */
	int fd;
	int waiting;               /* on srv->waiting: no complete request yet */
	int closed;                /* shut down here: no longer counted in srv->live */
	uint64_t since_ms;         /* when it began to wait for the current request */
	struct tcx_client client;  /* its address */
	struct tcx_list wait_node; /* on srv->waiting */
	struct pending *pend;      /* the check it is suspended for */
	int rwait;                 /* suspended for the next collection: on h->rw */
	struct tcx_list rw_node;
	/* While an answer of /metrics is being sent: a reference to the
	 * exposition it is from, and its place on h's readers. */
	struct tcx_expo *expo;
	struct tcx_list reader_node;
};

/* A request whose password is being checked (its req_cls): its connection
 * is suspended until the check ends, so that the thread serving it serves
 * its other connections meanwhile. Freed by the handler once it resumes, or
 * when the request ends. */
struct pending {
	struct MHD_Connection *mc;
	struct conn *conn;          /* its connection's, while linked (under h->lock) */
	struct tcx_auth_check *chk; /* until let go of (under h->lock) */
	int done, ok;               /* set by auth_done() before it resumes mc */
	int full;                   /* not queued: too many checks wait */
	int closed;                 /* its connection closed here (under h->lock) */
	struct tcx_list node;       /* on h->pending, under h->lock */
};

/* What one client address (tcx_client_key()) asked of one collection. */
struct client_turn {
	struct tcx_client key;
	uint64_t seq;     /* of the collection (0: a free slot) */
	unsigned renders; /* on demand */
	unsigned first;   /* its first variant + 1 */
	size_t sent;      /* bytes of the bodies rendered ahead, as they were asked */
};
#define CLIENT_SLOTS 256 /* the addresses followed in one collection */

/* One libmicrohttpd daemon, for one listen address. */
struct server {
	struct tcx_http *h;
	struct MHD_Daemon *d;
	char *addr;              /* a copy: the configuration may go first */
	int quiesced;            /* its listen socket went to a successor */
	int tls;                 /* no writing on its sockets but libmicrohttpd's */
	size_t live;             /* connections not closed here */
	struct tcx_list waiting; /* conns waiting for a request, oldest first */
};

struct tcx_http {
	struct tcx_state *st;
	struct server srv[TCX_MAX_LISTEN];
	size_t n;
	struct tcx_webconfig *web; /* what the TLS settings of these daemons came from */
	unsigned max_connections;  /* per server, as fits in RLIMIT_NOFILE */
	uint64_t deadline_ms;      /* for a whole request */
	size_t max_stale;          /* bytes: max_stale_mib */
	/* Every server's connections sending an answer of /metrics, by the
	 * age of its exposition, oldest first. */
	struct tcx_list readers;
	/* the servers' connection lists and counts, closing, pending, readers */
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the reaper waits on it (CLOCK_MONOTONIC) */
	pthread_t reaper;
	int reaper_running, stop;
	size_t closing; /* connections shut down here whose descriptor is still open */
	struct quiet {  /* libmicrohttpd's warnings: see quiet_pass() */
		char key[96];
		uint64_t last_ms; /* when it was last logged (0: a free slot) */
		unsigned long left_out;
	} quiet[8];
	/* quiet[] alone, and nothing taken under it: libmicrohttpd logs from
	 * calls made with lock held (MHD_resume_connection()), or with the
	 * checker's lock held (auth_done()) */
	pthread_mutex_t quiet_lock;
	struct tcx_list pending; /* password checks under way */
	int stopping;            /* no more of them: tcx_http_stop() */
	unsigned checks_per_ip, checks;
	/* Renders on demand (see the top), under lock: what each address
	 * asked of a collection, how many the collection render_seq had in
	 * all, and the connections waiting for the one after published_seq. */
	unsigned renders_per_ip, renders;
	struct client_turn turns[CLIENT_SLOTS];
	uint64_t render_seq, published_seq;
	unsigned n_rendered;
	struct tcx_list rw;
};

void tcx_http_response_free(void *resp)
{
	MHD_destroy_response(resp);
}

static void count(struct tcx_state *st, unsigned code)
{
	atomic_fetch_add_explicit(&st->http_requests[tcx_http_code_slot(code)], 1,
	                          memory_order_relaxed);
}

/* ---- slow clients (see the top of the file) --------------------------------------------- */

/* The list functions and close_conn() are called with h->lock held. */
static void wait_push(struct conn *c, uint64_t now)
{
	struct server *s = c->srv;

	c->since_ms = now;
	c->waiting = 1;
	tcx_list_push_back(&s->waiting, &c->wait_node);
	if (s->waiting.next == &c->wait_node) /* the reaper may wait for nothing, or for later */
		pthread_cond_signal(&s->h->wake);
}

static void wait_remove(struct conn *c)
{
	if (!c->waiting)
		return;
	tcx_list_remove(&c->wait_node);
	c->waiting = 0;
}

/* c sends an answer of e (whose reference it takes): onto h's readers,
 * after those of older expositions (from the newest end: an answer is
 * nearly always of the current one). */
static void reader_push(struct tcx_http *h, struct conn *c, struct tcx_expo *e)
{
	struct tcx_list *p = h->readers.prev;

	while (p != &h->readers && tcx_list_entry(p, struct conn, reader_node)->expo->seq > e->seq)
		p = p->prev;
	c->expo = e;
	tcx_list_insert_after(p, &c->reader_node);
}

/* c's answer has ended: off h's readers. Returns the reference it held
 * (to release once the lock is let go: it may free a collection), or
 * NULL. */
static struct tcx_expo *reader_remove(struct conn *c)
{
	struct tcx_expo *e = c->expo;

	if (!e)
		return NULL;
	tcx_list_remove(&c->reader_node);
	c->expo = NULL;
	return e;
}

/* c off h's connections waiting for a collection, and resumed (with
 * resume). */
static void rwait_remove(struct conn *c, int resume)
{
	tcx_list_remove(&c->rw_node);
	c->rwait = 0;
	if (resume)
		MHD_resume_connection(c->mc);
}

static void close_conn(struct conn *c)
{
	struct pending *p = c->pend;

	if (p) { /* suspended for a check: resumed, to close */
		c->pend = NULL;
		p->conn = NULL;
		p->closed = 1;
		tcx_webconfig_check_end(p->chk);
		p->chk = NULL;
		if (!p->done)
			MHD_resume_connection(p->mc);
	}
	if (c->rwait)
		rwait_remove(c, 1);
	wait_remove(c);
	c->closed = 1;
	c->srv->live--;
	c->srv->h->closing++;
	shutdown(c->fd, SHUT_RDWR);
}

static int same_client(const struct conn *a, const struct conn *b)
{
	return memcmp(&a->client, &b->client, sizeof(a->client)) == 0;
}

/* The connection to close for c, the newest, when s is beyond its limit. */
static struct conn *to_close(struct server *s, const struct conn *c)
{
	struct conn *x;

	tcx_list_for_each(x, &s->waiting, struct conn, wait_node)
		if (x != c && same_client(x, c))
			return x;
	return tcx_list_first(&s->waiting, struct conn, wait_node);
}

/* Close the connections of s past their deadline; returns the next
 * deadline (UINT64_MAX: none). */
static uint64_t reap(struct server *s, uint64_t now)
{
	uint64_t dl = s->h->deadline_ms;
	struct conn *c;

	while ((c = tcx_list_first(&s->waiting, struct conn, wait_node)) &&
	       c->since_ms + dl <= now) {
		if (c->rwait) { /* answered (429) rather than closed */
			rwait_remove(c, 1);
			wait_remove(c);
		} else {
			close_conn(c);
		}
	}
	return c ? c->since_ms + dl : UINT64_MAX;
}

static void *reaper(void *arg)
{
	struct tcx_http *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		uint64_t now = tcx_clock_ms(CLOCK_MONOTONIC), next = UINT64_MAX;

		for (size_t i = 0; i < h->n; i++) {
			uint64_t t = reap(&h->srv[i], now);

			if (t < next)
				next = t;
		}
		if (next == UINT64_MAX) {
			pthread_cond_wait(&h->wake, &h->lock);
		} else {
			struct timespec ts = tcx_ms_ts(next);

			pthread_cond_timedwait(&h->wake, &h->lock, &ts);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* MHD_OPTION_NOTIFY_CONNECTION: a connection starts or ends. */
static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	struct server *s = cls;
	struct tcx_http *h = s->h;
	struct conn *c = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		uint64_t now = tcx_clock_ms(CLOCK_MONOTONIC);

		c = calloc(1, sizeof(*c));
		if (!c) { /* untracked, it could hold its slot for ever */
			shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		c->srv = s;
		c->mc = mc;
		c->thread = pthread_self();
		c->fd = ci->connect_fd;
		ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci && ci->client_addr->sa_family == AF_INET) {
			c->client.family = AF_INET;
			memcpy(c->client.addr, &((struct sockaddr_in *)ci->client_addr)->sin_addr,
			       4);
		} else if (ci && ci->client_addr->sa_family == AF_INET6) {
			c->client.family = AF_INET6;
			memcpy(c->client.addr, &((struct sockaddr_in6 *)ci->client_addr)->sin6_addr,
			       16);
		}
		*socket_context = c;
		pthread_mutex_lock(&h->lock);
		s->live++;
		wait_push(c, now);
		reap(s, now);
		while (s->live > h->max_connections && !tcx_list_empty(&s->waiting))
			close_conn(to_close(s, c));
		pthread_mutex_unlock(&h->lock);
	} else if (c) {
		struct tcx_expo *e;

		pthread_mutex_lock(&h->lock);
		if (c->rwait)
			rwait_remove(c, 0);
		if (!c->closed) {
			wait_remove(c);
			s->live--;
		} else {
			h->closing--;
		}
		e = reader_remove(c);
		pthread_mutex_unlock(&h->lock);
		tcx_expo_unref(e);
		*socket_context = NULL;
		free(c);
	}
}

/* The handler has a whole request (headers and body): no deadline until its
 * answer has been sent. */
static void request_received(struct tcx_http *h, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	wait_remove(c);
	pthread_mutex_unlock(&h->lock);
}

/* The req_cls of a request the handler has seen, until it is a struct
 * pending, and of one that waits for a collection to be rendered for it
 * (authorised): only their addresses are used. */
static const int req_started, req_waited;

/* p off h->pending, its check let go of. */
static void pending_drop(struct tcx_http *h, struct pending *p)
{
	struct tcx_auth_check *chk;

	pthread_mutex_lock(&h->lock);
	if (p->conn) { /* its request is whole again */
		p->conn->pend = NULL;
		wait_remove(p->conn);
		p->conn = NULL;
	}
	tcx_list_remove(&p->node);
	chk = p->chk;
	p->chk = NULL;
	pthread_mutex_unlock(&h->lock);
	tcx_webconfig_check_end(chk);
}

/* MHD_OPTION_NOTIFY_COMPLETED: a request the handler saw has ended (its
 * answer sent, or the connection closing); the connection now waits for the
 * next one. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct server *s = cls;
	struct conn *c = conn_of(mc);
	struct tcx_expo *e;

	if (*req_cls && *req_cls != &req_started && *req_cls != &req_waited) {
		/* a struct pending, closed before it resumed */
		pending_drop(s->h, *req_cls);
		free(*req_cls);
		*req_cls = NULL;
	}
	if (!c)
		return;
	pthread_mutex_lock(&s->h->lock);
	e = reader_remove(c);
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !c->closed && !c->waiting)
		wait_push(c, tcx_clock_ms(CLOCK_MONOTONIC));
	pthread_mutex_unlock(&s->h->lock);
	tcx_expo_unref(e);
}

/* c's answer of /metrics, just queued, is from e. */
static void reader_start(struct tcx_http *h, struct MHD_Connection *mc, struct tcx_expo *e)
{
	struct conn *c = conn_of(mc);
	struct tcx_expo *old;

	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	old = reader_remove(c);
	if (!c->closed)
		reader_push(h, c, tcx_expo_ref(e));
	pthread_mutex_unlock(&h->lock);
	tcx_expo_unref(old);
}

void tcx_http_published(struct tcx_http *h, const struct tcx_expo *e)
{
	static atomic_int logged;
	const struct tcx_expo *group = NULL;
	size_t held = 0, newest = 0;
	unsigned n_cut = 0;
	int over = 0;
	struct conn *x;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->published_seq = e->seq;
	while (!tcx_list_empty(&h->rw)) /* their GETs are taken again, of e */
		rwait_remove(tcx_list_first(&h->rw, struct conn, rw_node), 1);
	/* From the newest: the collections before e that fit in max_stale
	 * keep their readers, and the readers of any older one are closed.
	 * Those closed already are on their way out. */
	tcx_list_for_each_reverse(x, &h->readers, struct conn, reader_node) {
		if (x->closed || x->expo->seq >= e->seq)
			continue;
		if (x->expo != group) {
			group = x->expo;
			held += tcx_expo_bytes(group);
			if (!newest)
				newest = held;
			over |= held > h->max_stale;
		}
		if (over) {
			close_conn(x);
			n_cut++;
		}
	}
	pthread_mutex_unlock(&h->lock);
	if (!n_cut)
		return;
	atomic_fetch_add_explicit(&h->st->http_cut[TCX_CUT_MEMORY], n_cut, memory_order_relaxed);
	if (!atomic_exchange(&logged, 1))
		log_warnx("http: answers still being sent held %zu MiB of collections replaced "
		          "since, more than max_stale_mib (%zu; the last one replaced took %zu "
		          "MiB): %u connection%s reading the oldest closed, counted in "
		          "tc_exporter_http_responses_cut_total{reason=\"memory\"} (logged once)",
		          held >> 20, h->max_stale >> 20, newest >> 20, n_cut,
		          n_cut == 1 ? "" : "s");
}

/* The web config's http_server_config.headers, which every response carries
 * (those of /metrics, made once per snapshot, follow a reload from the
 * collection it starts). */
static void add_web_headers(struct tcx_state *st, struct MHD_Response *r)
{
	struct tcx_webconfig *web = tcx_state_web(st);

	for (size_t i = 0; web && i < web->n_headers; i++)
		MHD_add_response_header(r, web->headers[i].name, web->headers[i].value);
	tcx_webconfig_unref(web);
}

/* A small response made for one request. */
static enum MHD_Result reply(struct tcx_state *st, struct MHD_Connection *c, unsigned code,
                             const char *type, const char *body, const char *hdr,
                             const char *hdrval)
{
	struct MHD_Response *r =
	        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (hdr)
		MHD_add_response_header(r, hdr, hdrval);
	add_web_headers(st, r);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	count(st, code);
	return ret;
}

/* The body of a streamed response: what libmicrohttpd reads as it sends. */
struct streamed {
	struct tcx_state *st;
	struct tcx_expo_stream *x;
};

/* libmicrohttpd's buffer for a body read when the client speaks HTTP/1.0
 * (with HTTP/1.1 it reads into its connection's own, for chunks). */
#define STREAM_BLOCK 32768

static ssize_t streamed_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct streamed *b = cls;
	ssize_t n = tcx_expo_stream_read(b->x, buf, max);

	(void)pos; /* one response per request: read in order */
	if (n > 0)
		return n;
	if (n == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* The status has gone: libmicrohttpd closes the connection without
	 * ending the body (no last chunk), so that the client sees it cut. It
	 * reads no more of it: one line per response. */
	atomic_fetch_add_explicit(&b->st->http_cut[TCX_CUT_RENDER], 1, memory_order_relaxed);
	log_err("cannot render /metrics: %s; the response is cut short", strerror((int)-n));
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* When the response goes: sent, its client gone, or the request a HEAD. */
static void streamed_free(void *cls)
{
	struct streamed *b = cls;

	tcx_expo_stream_free(b->x);
	free(b);
}

/* The body of a HEAD's own response: never read. */
static ssize_t headless_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	(void)pos;
	(void)buf;
	(void)max;
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

/* Variant v of e as a response (tcx_expo_make_fn; arg: the state):
 * streamed, headers alone, or rendered whole now. */
static int make_response(void *arg, struct tcx_expo *e, enum tcx_variant v, int stream, void **resp,
                         size_t *bytes)
{
	struct tcx_state *st = arg;
	struct tcx_selfstats ss;
	struct MHD_Response *r;

	if (stream >= 0)
		tcx_state_selfstats(st, e->snap, &ss);
	if (stream < 0) {
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, headless_read,
		                                      NULL, NULL);
		if (!r)
			return -ENOMEM;
	} else if (stream) {
		struct streamed *b = malloc(sizeof(*b));

		if (!b)
			return -ENOMEM;
		b->st = st;
		b->x = tcx_expo_stream_new(e, v, &ss);
		r = b->x ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
		                                             streamed_read, b, streamed_free)
		         : NULL;
		if (!r) {
			streamed_free(b);
			return -ENOMEM;
		}
	} else {
		struct tcx_rendered out;
		int err = tcx_expo_render(e->snap, e->labels, &ss, v, &out);

		if (err < 0)
			return err;
		*bytes = tcx_alloc_size(out.p);
		r = MHD_create_response_from_buffer(out.len, out.p, MHD_RESPMEM_MUST_FREE);
		if (!r) {
			free(out.p);
			return -ENOMEM;
		}
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, tcx_variant_content_type(v));
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (tcx_variant_is_gzip(v))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	add_web_headers(st, r);
	*resp = r;
	return 0;
}

void tcx_http_prerender(struct tcx_state *st, struct tcx_expo *e)
{
	int err = tcx_expo_prerender(e, make_response, st);

	if (err < 0)
		log_err("cannot render /metrics: %s", strerror(-err));
}

static int quiet_pass(struct tcx_http *h, const char *msg, unsigned long *left_out,
                      uint64_t *since_ms);

/* 429 for the reason why, counted, and logged at most once in QUIET_MS per
 * reason, naming the client's address; retry_s for Retry-After. */
static enum MHD_Result refuse(struct tcx_http *h, struct MHD_Connection *c,
                              enum tcx_refuse_reason why, const char *body, uint64_t retry_s)
{
	const struct conn *cn = conn_of(c);
	char retry[24], addr[INET6_ADDRSTRLEN] = "an unknown address";
	unsigned long left_out = 0;
	uint64_t since_ms = 0;
	int pass;

	atomic_fetch_add_explicit(&h->st->http_refused[why], 1, memory_order_relaxed);
	pthread_mutex_lock(&h->quiet_lock);
	pass = quiet_pass(h, tcx_refuse_reasons[why], &left_out, &since_ms);
	pthread_mutex_unlock(&h->quiet_lock);
	if (pass) {
		char more[80] = "";

		if (cn && cn->client.family)
			inet_ntop(cn->client.family, cn->client.addr, addr, sizeof(addr));
		if (left_out)
			snprintf(more, sizeof(more), "; %lu more in the last %llu s, not logged",
			         left_out, (unsigned long long)(since_ms / 1000));
		log_warnx("http: %s: 429, %.*s (tc_exporter_http_requests_refused_total"
		          "{reason=\"%s\"}%s)",
		          addr, (int)strcspn(body, ":\n"), body, tcx_refuse_reasons[why], more);
	}
	snprintf(retry, sizeof(retry), "%llu", (unsigned long long)retry_s);
	return reply(h->st, c, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain; charset=utf-8", body,
	             "Retry-After", retry);
}

enum render_turn { RENDER_NOW, RENDER_WAIT, RENDER_REFUSED };

/* Under h->lock: the turn of key in the collection seq; NULL when
 * CLIENT_SLOTS other addresses have one. */
static struct client_turn *turn_of(struct tcx_http *h, const struct tcx_client *key, uint64_t seq)
{
	uint64_t hash = tcx_hash_bytes(0, key, sizeof(*key));

	for (unsigned i = 0; i < CLIENT_SLOTS; i++) {
		struct client_turn *t = &h->turns[(hash + i) % CLIENT_SLOTS];

		if (t->seq < seq) /* free, or of an older collection */
			*t = (struct client_turn){.key = *key, .seq = seq};
		else if (t->seq > seq || memcmp(&t->key, key, sizeof(*key)) != 0)
			continue;
		return t;
	}
	return NULL;
}

/* The bytes of e's bodies rendered ahead one client address may be sent:
 * renders_per_ip times the largest of them (BODY_FLOOR at least) for each
 * second of the interval (one at least). So a few scrapers at one address,
 * or one that scrapes faster than the collections, are never held up; one
 * that fetches a body again as fast as it can is sent, each second, what
 * renders_per_ip scrapes of the largest variant take. Sending costs the
 * daemon about a millisecond a MB: a client on the loopback fetching a 23 MB
 * text exposition 10 times a second more than doubled its CPU. *len: the
 * size of v's body. */
#define BODY_FLOOR ((size_t)1 << 20) /* a small exposition's: a MB costs a millisecond */
static size_t body_budget(struct tcx_http *h, const struct tcx_expo *e, enum tcx_variant v,
                          size_t *len)
{
	double interval;
	size_t largest;

	tcx_state_age(h->st, &interval);
	*len = tcx_expo_body_size(e, v, &largest);
	if (largest < BODY_FLOOR)
		largest = BODY_FLOOR;
	return (size_t)((double)largest * h->renders_per_ip * (interval > 1 ? interval : 1));
}

/* A GET of variant v of e from mc: whether it is answered now, waits for
 * the next collection (mc suspended), or is refused (waited: it has waited
 * once; *why says which budget it found spent). A variant rendered ahead is
 * answered now while its address has been sent less of e's bodies rendered
 * ahead than it may (body_budget(), counted); any other is if its address,
 * and all of them, have renders of e left (counted). The GET marks v as
 * asked of e when v is its address's first variant of e (or, with no turn
 * left for it, when v is rendered ahead): so a client cycling through the
 * variants has one of them rendered ahead, not all four. */
static enum render_turn get_turn(struct tcx_http *h, struct MHD_Connection *mc, struct tcx_expo *e,
                                 enum tcx_variant v, int waited, enum tcx_refuse_reason *why)
{
	struct conn *c = conn_of(mc);
	struct tcx_client key = tcx_client_key(c ? &c->client : NULL);
	unsigned ahead = e->ahead & (1u << v);
	enum render_turn r = RENDER_NOW;
	struct client_turn *t;
	size_t len = 0, budget = 0;

	if (ahead)
		budget = body_budget(h, e, v, &len);
	pthread_mutex_lock(&h->lock);
	if (e->seq > h->render_seq) {
		h->render_seq = e->seq;
		h->n_rendered = 0;
	}
	t = turn_of(h, &key, e->seq);
	if (t && !t->first && !waited)
		t->first = v + 1;
	if (!waited && (t ? t->first == v + 1 : ahead != 0))
		tcx_expo_ask(e, v);
	if (ahead && (!t || t->sent < budget)) {
		/* answered from the body rendered ahead */
		if (t)
			t->sent += len;
	} else if (!ahead && t && t->renders < h->renders_per_ip && h->n_rendered < h->renders) {
		t->renders++;
		h->n_rendered++;
	} else if (waited || !c || c->closed || h->stopping) {
		*why = ahead ? TCX_REFUSE_BYTES : TCX_REFUSE_RENDER;
		r = RENDER_REFUSED;
	} else {
		r = RENDER_WAIT;
		MHD_suspend_connection(mc);
		if (h->published_seq > e->seq) { /* one is out already: at once */
			MHD_resume_connection(mc);
		} else {
			c->rwait = 1;
			tcx_list_push_front(&h->rw, &c->rw_node);
			wait_push(c, tcx_clock_ms(CLOCK_MONOTONIC));
		}
	}
	pthread_mutex_unlock(&h->lock);
	return r;
}

/* Seconds to the next collection, at least 1. */
static uint64_t to_next(struct tcx_state *st)
{
	double interval, age = tcx_state_age(st, &interval);

	return age >= 0 && interval > age + 1 ? (uint64_t)(interval - age) + 1 : 1;
}

/* /metrics; *req_cls is &req_waited once it has waited for a collection. */
static enum MHD_Result serve_metrics(struct tcx_http *h, struct MHD_Connection *c, int head,
                                     void **req_cls)
{
	struct tcx_state *st = h->st;
	const char *accept =
	        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *enc =
	        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	enum tcx_variant v = tcx_negotiate(accept, enc);
	struct tcx_expo *e = tcx_state_expo(st);
	void *r = NULL;
	enum MHD_Result ret;
	int err, own;

	if (!e)
		return reply(st, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		             "no collection has completed yet\n", "Retry-After", "1");
	if (!head) {
		enum tcx_refuse_reason why;
		enum render_turn t = get_turn(h, c, e, v, *req_cls == &req_waited, &why);

		if (t != RENDER_NOW)
			tcx_expo_unref(e);
		if (t == RENDER_WAIT) {
			*req_cls = (void *)&req_waited;
			return MHD_YES;
		}
		if (t == RENDER_REFUSED)
			return refuse(
			        h, c, why,
			        why == TCX_REFUSE_BYTES
			                ? "too many bytes of /metrics sent to this address in "
			                  "this collection: retry after the next one\n"
			                : "too many renders of /metrics for this address in "
			                  "this collection: retry after the next one\n",
			        to_next(st));
	}
	err = tcx_expo_response(e, v, head, make_response, st, &r, &own);
	if (err < 0) {
		tcx_expo_unref(e);
		log_err("cannot render /metrics: %s", strerror(-err));
		return reply(st, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		             "cannot render metrics\n", NULL, NULL);
	}
	/* A streamed body's length is not known ahead. libmicrohttpd 0.9.75
	 * ends a chunked answer to HEAD with the last chunk, a body that the
	 * client would read as the start of its next answer: a HEAD gets
	 * neither a length nor chunks (HTTP/1.0's way, in an HTTP/1.1 answer),
	 * and its connection closes. */
	if (own && head)
		MHD_set_response_options(r, MHD_RF_HTTP_VERSION_1_0_ONLY, MHD_RO_END);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	if (own) /* the connection holds it now */
		MHD_destroy_response(r);
	if (ret == MHD_YES)
		reader_start(h, c, e);
	tcx_expo_unref(e);
	count(st, MHD_HTTP_OK);
	return ret;
}

/* The landing page (agent/render/page.h), made for each request: through
 * the handler's checks (the web config's auth) like /metrics, with its
 * headers. */
static enum MHD_Result serve_landing(struct tcx_state *st, struct MHD_Connection *c)
{
	struct tcx_expo *e = tcx_state_expo(st);
	struct tcx_page_info pi = {.version = PACKAGE_VERSION, .now = tcx_clock_s(CLOCK_REALTIME)};
	struct MHD_Response *r;
	struct tcx_buf b;
	enum MHD_Result ret;

	pthread_mutex_lock(&st->lock);
	pi.interval_s = st->cfg->interval_s;
	pi.reload_ok = st->last_reload_ok;
	pi.loaded_ts = st->last_reload_ts;
	pthread_mutex_unlock(&st->lock);
	tcx_buf_init_mem(&b);
	tcx_page_render(&b, e ? e->snap : NULL, &pi);
	tcx_expo_unref(e);
	if (b.err) {
		int err = b.err;

		tcx_buf_free(&b);
		log_err("cannot render the landing page: %s", strerror(err));
		return reply(st, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		             "cannot render the page\n", NULL, NULL);
	}
	r = MHD_create_response_from_buffer(b.len, b.p, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		tcx_buf_free(&b);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	add_web_headers(st, r);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	count(st, MHD_HTTP_OK);
	return ret;
}

static enum MHD_Result serve_health(struct tcx_state *st, struct MHD_Connection *c)
{
	double interval, age = tcx_state_age(st, &interval);
	char body[160];

	if (age >= 0 && age < 3 * interval) {
		snprintf(body, sizeof(body), "ok: last collection %.1f s ago\n", age);
		return reply(st, c, MHD_HTTP_OK, "text/plain; charset=utf-8", body, NULL, NULL);
	}
	if (age < 0)
		snprintf(body, sizeof(body), "stale: no collection has completed yet\n");
	else
		snprintf(body, sizeof(body),
		         "stale: last collection %.1f s ago, more than 3 intervals of %.1f s\n",
		         age, interval);
	return reply(st, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", body, NULL,
	             NULL);
}

/* 401, asking for basic auth. */
static enum MHD_Result unauthorized(struct tcx_http *h, struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(13, (void *)"Unauthorized\n",
	                                                         MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret = MHD_NO;

	if (r) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
		                        "text/plain; charset=utf-8");
		add_web_headers(h->st, r);
		ret = MHD_queue_basic_auth_fail_response(c, "tcexporter", r);
		MHD_destroy_response(r);
	}
	count(h->st, MHD_HTTP_UNAUTHORIZED);
	return ret;
}

/* The password check of a pending request ended (in the checker's thread,
 * under its lock): its connection goes on, and the handler is called again. */
static void auth_done(void *arg, int ok)
{
	struct pending *p = arg;

	p->ok = ok;
	p->done = 1;
	MHD_resume_connection(p->mc);
}

/* Check (user, pass) with the connection suspended: MHD_YES, or an answer
 * when it cannot be. */
static enum MHD_Result check_suspended(struct tcx_http *h, struct MHD_Connection *c, void **req_cls,
                                       struct tcx_webconfig *web, const struct tcx_client *client,
                                       const char *user, const char *pass)
{
	struct pending *p = calloc(1, sizeof(*p));
	struct conn *cn = conn_of(c);

	if (p) {
		p->mc = c;
		pthread_mutex_lock(&h->lock);
		if (h->stopping || (cn && cn->closed)) {
			int closed = cn && cn->closed;

			pthread_mutex_unlock(&h->lock);
			free(p);
			p = NULL;
			if (closed) { /* shut down here meanwhile: no answer */
				tcx_webconfig_auth_refund(web, client);
				return MHD_NO;
			}
		}
	}
	if (!p) {
		tcx_webconfig_auth_refund(web, client);
		return reply(h->st, c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		             "cannot check the password now\n", "Retry-After", "1");
	}
	/* suspended before the check is queued, so that it resumes after */
	MHD_suspend_connection(c);
	tcx_list_push_front(&h->pending, &p->node);
	p->chk = tcx_webconfig_check_start(web, client, user, pass, h->checks_per_ip, h->checks,
	                                   auth_done, p);
	if (!p->chk) { /* the handler answers 429 (queues full) or 503 */
		p->full = errno == EBUSY;
		MHD_resume_connection(c);
	} else if (cn) { /* closed like a connection without a whole request */
		p->conn = cn;
		cn->pend = p;
		wait_push(cn, tcx_clock_ms(CLOCK_MONOTONIC));
	}
	pthread_mutex_unlock(&h->lock);
	*req_cls = p;
	return MHD_YES;
}

/* Basic auth and client certificates, as the web config asks: 1 when the
 * request may go on; else 0 with *ret the handler's result (an answer, or
 * the connection suspended while the password is checked: the handler is
 * called again once it is). */
static int authorized(struct tcx_http *h, struct MHD_Connection *c, void **req_cls,
                      enum MHD_Result *ret)
{
	struct tcx_webconfig *web;
	int ok = 1;

	if (*req_cls != &req_started) { /* a struct pending: its check has ended */
		struct pending *p = *req_cls;
		int done, passed, full, closed;

		pending_drop(h, p);
		done = p->done;
		passed = p->ok;
		full = p->full;
		closed = p->closed;
		free(p);
		*req_cls = (void *)&req_started;
		if (closed && !done) /* its socket is shut down */
			*ret = MHD_NO;
		else if (full)
			*ret = refuse(h, c, TCX_REFUSE_PASSWORD_QUEUE,
			              "too many password checks waiting: retry later\n", 1);
		else if (!done) /* the server stops, or there was no memory */
			*ret = reply(h->st, c, MHD_HTTP_SERVICE_UNAVAILABLE,
			             "text/plain; charset=utf-8", "cannot check the password now\n",
			             "Retry-After", "1");
		else if (!passed)
			*ret = unauthorized(h, c);
		return done && passed;
	}
	web = tcx_state_web(h->st);
	if (!web)
		return 1;
	if (web->cert_pem && web->client_auth != TCX_CLIENT_AUTH_NONE) {
		const union MHD_ConnectionInfo *ci =
		        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		char err[256] = "no TLS session", body[300];

		if (!ci ||
		    tcx_webconfig_check_client_cert(web, ci->tls_session, err, sizeof(err)) < 0) {
			snprintf(body, sizeof(body), "forbidden: %s\n", err);
			*ret = reply(h->st, c, MHD_HTTP_FORBIDDEN, "text/plain; charset=utf-8",
			             body, NULL, NULL);
			ok = 0;
		}
	}
	if (ok && web->n_users) {
		static const char limited[] =
		        "too many failed password checks from this address: retry later\n";
		static const struct tcx_client unknown;
		const struct conn *cn = conn_of(c);
		const struct tcx_client *client = cn ? &cn->client : &unknown;
		char *pass = NULL;
		char *user = MHD_basic_auth_get_username_password(c, &pass);
		uint64_t retry_s;

		ok = 0;
		if (!user || !pass) {
			*ret = unauthorized(h, c);
		} else {
			switch (tcx_webconfig_auth(web, client, user, pass, &retry_s)) {
			case TCX_AUTH_OK:
				ok = 1;
				break;
			case TCX_AUTH_LIMITED:
				*ret = refuse(h, c, TCX_REFUSE_PASSWORD_RATE, limited, retry_s);
				break;
			case TCX_AUTH_CHECK:
				*ret = check_suspended(h, c, req_cls, web, client, user, pass);
				break;
			}
		}
		MHD_free(user);
		MHD_free(pass);
	}
	tcx_webconfig_unref(web);
	return ok;
}

/* ---- request framing (RFC 9112) ------------------------------------------------------- */

/* Whether v is a Content-Length (decimal digits, at most 2^64 - 1), into *n. */
static int content_length(const char *v, uint64_t *n)
{
	*n = 0;
	if (!*v)
		return 0;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || *n > (UINT64_MAX - (uint64_t)(*v - '0')) / 10)
			return 0;
		*n = *n * 10 + (uint64_t)(*v - '0');
	}
	return 1;
}

struct framing {
	unsigned n_te, n_cl;
	int te_chunked;  /* the one Transfer-Encoding is "chunked" */
	int cl_conflict; /* Content-Length values that differ, or are not numbers */
	uint64_t cl;     /* the first one */
};

static enum MHD_Result framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
	struct framing *f = cls;
	uint64_t n = 0;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->te_chunked = ++f->n_te == 1 && value && strcasecmp(value, "chunked") == 0;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		if (!value || !content_length(value, &n) || (f->n_cl && n != f->cl))
			f->cl_conflict = 1;
		if (!f->n_cl++)
			f->cl = n;
	}
	return MHD_YES;
}

/* Why the body of this request cannot be delimited for certain (RFC 9112
 * section 6), so that it must get 400 and its connection close: NULL when it
 * can. libmicrohttpd follows the first Content-Length only, and reads a
 * Transfer-Encoding other than chunked to the end of the connection. */
static const char *framing_error(struct MHD_Connection *c, const char *version)
{
	struct framing f = {0};

	MHD_get_connection_values(c, MHD_HEADER_KIND, framing_header, &f);
	if (f.n_te && f.n_cl)
		return "bad request: both Transfer-Encoding and Content-Length\n";
	if (f.n_te && strcmp(version, MHD_HTTP_VERSION_1_0) == 0)
		return "bad request: Transfer-Encoding in an HTTP/1.0 request\n";
	if (f.n_te && !f.te_chunked)
		return "bad request: a Transfer-Encoding other than chunked\n";
	if (f.cl_conflict)
		return "bad request: Content-Length headers that differ\n";
	return NULL;
}

/* The path of an absolute-form request target (http://host/path: RFC 9112
 * section 3.2.2), which a server must accept; others as they are. */
static const char *origin_path(const char *url)
{
	const char *p;

	if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8;
	else
		return url;
	p = strchr(p, '/');
	return p ? p : "/";
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **req_cls)
{
	struct tcx_http *h = cls;
	enum MHD_Result ret = MHD_NO;

	if (!*req_cls) {
		const char *bad = framing_error(c, version);

		*req_cls = (void *)&req_started;
		if (!bad)
			return MHD_YES;
		request_received(h, c);
		return reply(h->st, c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", bad,
		             MHD_HTTP_HEADER_CONNECTION, "close");
	}
	if (*upload_data_size) { /* a body we have no use for */
		*upload_data_size = 0;
		return MHD_YES;
	}
	request_received(h, c);
	if (*req_cls == &req_waited) { /* a GET of /metrics, authorised */
		const struct conn *cn = conn_of(c);
		int closed;

		pthread_mutex_lock(&h->lock);
		closed = cn && cn->closed;
		pthread_mutex_unlock(&h->lock);
		return closed ? MHD_NO : serve_metrics(h, c, 0, req_cls);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(h->st, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
		             "method not allowed: use GET or HEAD\n", MHD_HTTP_HEADER_ALLOW,
		             "GET, HEAD");
	if (!authorized(h, c, req_cls, &ret))
		return ret;
	url = origin_path(url);
	if (strcmp(url, "/metrics") == 0)
		return serve_metrics(h, c, strcmp(method, MHD_HTTP_METHOD_HEAD) == 0, req_cls);
	if (strcmp(url, "/") == 0)
		return serve_landing(h->st, c);
	if (strcmp(url, "/healthz") == 0)
		return serve_health(h->st, c);
	return reply(h->st, c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
	             "not found: try /metrics\n", NULL, NULL);
}

/* ---- libmicrohttpd's log ------------------------------------------------------------- */

/* libmicrohttpd answers a request it cannot parse or hold itself (400, 413,
 * 414, 431, 505), without calling the handler, and logs each such answer
 * with this format, whose first argument is the status: the one place where
 * these answers can be counted. tests/daemon/http_errors.sh checks that each
 * is. */
static const char mhd_error_answer[] = "Error processing request (HTTP response code is %u";
/* accept() failed; the argument is strerror() of its errno. */
static const char mhd_accept_error[] = "Error accepting connection: %s";
/* ... in a thread with no connection: it tries again at once, for as long
 * as it fails. */
static const char mhd_busy_wait[] = "Hit process or system resource limit at FIRST";
/* The two answers libmicrohttpd 0.9.75 gets wrong (see answer_instead()):
 * a query with more arguments than the connection's memory holds, and a
 * Content-Length that is not a number (400) or beyond 64 bits (413). */
static const char mhd_args_full[] = "Not enough memory in pool to allocate header record";
static const char mhd_length_large[] = "Too large value of 'Content-Length' header";
static const char mhd_length_bad[] = "Failed to parse `Content-Length' header";

#define QUIET_MS 60000 /* each warning of libmicrohttpd at most once in it */

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* accept() failed for want of descriptors: close the connection that has
 * waited longest for its request, so that the next connection gets in.
 * libmicrohttpd stops accepting in a thread that has connections until one
 * of them ends (and so fails once until then): one of this thread's, if it
 * has one, or its listen address could be shut out for good. Else the
 * oldest of all, unless one closed here still holds its descriptor, which
 * is about to be free: a thread with no connection fails again at once,
 * for as long as it fails. With h->lock held. */
static void evict_for_fd(struct tcx_http *h)
{
	pthread_t self = pthread_self();
	struct conn *mine = NULL, *any = NULL;

	for (size_t i = 0; i < h->n; i++) {
		struct conn *c = tcx_list_first(&h->srv[i].waiting, struct conn, wait_node);

		if (c && (!any || c->since_ms < any->since_ms))
			any = c;
		tcx_list_for_each(c, &h->srv[i].waiting, struct conn, wait_node) {
			if (pthread_equal(c->thread, self)) {
				if (!mine || c->since_ms < mine->since_ms)
					mine = c;
				break;
			}
		}
	}
	if (mine)
		close_conn(mine);
	else if (any && !h->closing)
		close_conn(any);
}

/* May this warning of libmicrohttpd be logged now? Each message (its digits
 * left out: the same one about another count) at most once in QUIET_MS: some
 * come with every failed accept(), thousands a second. *left_out: how many
 * were not, over the last *since_ms. With h->quiet_lock held. */
static int quiet_pass(struct tcx_http *h, const char *msg, unsigned long *left_out,
                      uint64_t *since_ms)
{
	size_t nq = sizeof(h->quiet) / sizeof(h->quiet[0]), k = 0;
	struct quiet *q = NULL, *lru = &h->quiet[0];
	uint64_t now = tcx_clock_ms(CLOCK_MONOTONIC);
	char key[sizeof(h->quiet[0].key)];

	for (; *msg && k < sizeof(key) - 1; msg++)
		if (*msg < '0' || *msg > '9')
			key[k++] = *msg;
	key[k] = '\0';
	for (size_t i = 0; i < nq && !q; i++) {
		if (h->quiet[i].last_ms && strcmp(h->quiet[i].key, key) == 0)
			q = &h->quiet[i];
		else if (h->quiet[i].last_ms < lru->last_ms)
			lru = &h->quiet[i];
	}
	if (!q) {
		q = lru;
		memcpy(q->key, key, k + 1);
		q->last_ms = 0;
		q->left_out = 0;
	}
	if (q->last_ms && now - q->last_ms < QUIET_MS) {
		q->left_out++;
		return 0;
	}
	*left_out = q->left_out;
	*since_ms = now - q->last_ms;
	q->left_out = 0;
	q->last_ms = now;
	return 1;
}

/* Where libmicrohttpd 0.9.75 answers wrongly, it logs first, from the
 * connection's thread, before it has written anything for the request:
 *   - a Content-Length that is not a number (400) or beyond 64 bits (413):
 *     it sends the header block twice, the second inside the first's body
 *     (fixed in 1.0.0);
 *   - a query string with more arguments than the connection's memory
 *     holds (about 500 "a=b"): it means to answer 431, but closes the
 *     connection with no answer.
 * answer_instead() answers (414 for the query) in its place and closes the
 * connection, so that what libmicrohttpd writes afterwards goes nowhere.
 * For the query, the connection is the one whose request line this thread
 * is parsing: uri_log() names it, and unescape() of the path ends the parse
 * of the arguments. */
static _Thread_local struct {
	struct conn *c;    /* whose query arguments this thread parses */
	const char *uri;   /* its request target, as uri_log() saw it */
	unsigned answered; /* the status answer_instead() sent, to count */
} parsing;

/* MHD_OPTION_URI_LOG_CALLBACK: a request line; its query arguments are
 * parsed next, then unescape() is called on its path. */
static void *uri_log(void *cls, const char *uri, struct MHD_Connection *mc)
{
	(void)cls;
	parsing.c = uri ? conn_of(mc) : NULL;
	parsing.uri = uri;
	parsing.answered = 0;
	return NULL; /* the request's context: handler() sets it */
}

/* MHD_OPTION_UNESCAPE_CALLBACK: libmicrohttpd's own, for each query
 * argument, then for the path. */
static size_t unescape(void *cls, struct MHD_Connection *mc, char *s)
{
	(void)cls;
	(void)mc;
	if (s == parsing.uri)
		parsing.c = NULL;
	return MHD_http_unescape(s);
}

/* The connection of this thread whose headers libmicrohttpd is parsing,
 * when they have an invalid Content-Length: the one waiting for its
 * request with all its headers, a Content-Length that is not one, and no
 * Transfer-Encoding (which libmicrohttpd would follow instead). With
 * h->lock held. */
static struct conn *bad_length(struct tcx_http *h)
{
	pthread_t self = pthread_self();
	uint64_t n;

	for (size_t i = 0; i < h->n; i++) {
		struct conn *c;

		tcx_list_for_each(c, &h->srv[i].waiting, struct conn, wait_node) {
			const char *v;

			if (!pthread_equal(c->thread, self) ||
			    !MHD_get_connection_info(c->mc,
			                             MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) ||
			    MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
			                                MHD_HTTP_HEADER_TRANSFER_ENCODING))
				continue;
			v = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND,
			                                MHD_HTTP_HEADER_CONTENT_LENGTH);
			if (v && !content_length(v, &n))
				return c;
		}
	}
	return NULL;
}

/* Answer code on c's socket and close it (see above); over TLS, only
 * close it. With h->lock held, from c's thread. */
static void answer_instead(struct conn *c, unsigned code)
{
	const char *reason = code == 413   ? "Content Too Large"
	                     : code == 414 ? "URI Too Long"
	                                   : "Bad Request";
	const char *body = code == 413 ? "content too large: a Content-Length beyond 64 bits\n"
	                   : code == 414
	                           ? "URI too long: more query arguments than a request can hold\n"
	                           : "bad request: an invalid Content-Length\n";
	char date[64], buf[512];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	if (c->closed)
		return;
	if (!c->srv->tls && gmtime_r(&now, &tm) &&
	    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
		n = snprintf(
		        buf, sizeof(buf),
		        "HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
		        "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s",
		        code, reason, date, strlen(body), body);
		if (send(c->fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
			parsing.answered = code;
	}
	close_conn(c);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct tcx_http *h = cls;
	int answered = starts(fmt, mhd_error_answer), pass;
	unsigned long left_out = 0;
	uint64_t since_ms = 0;
	char msg[512];
	va_list aq;
	size_t n;

	if (answered) {
		unsigned code;

		va_copy(aq, ap);
		code = va_arg(aq, unsigned);
		va_end(aq);
		count(h->st, parsing.answered ? parsing.answered : code);
		parsing.answered = 0;
	} else if (starts(fmt, mhd_accept_error)) {
		const char *e;
		int fds, resource;

		va_copy(aq, ap);
		e = va_arg(aq, const char *);
		va_end(aq);
		fds = strcmp(e, strerror(EMFILE)) == 0 || strcmp(e, strerror(ENFILE)) == 0;
		resource = fds || strcmp(e, strerror(ENOMEM)) == 0 ||
		           strcmp(e, strerror(ENOBUFS)) == 0;
		atomic_fetch_add_explicit(&h->st->http_accept_errors[resource ? 0 : 1], 1,
		                          memory_order_relaxed);
		if (fds) {
			pthread_mutex_lock(&h->lock);
			evict_for_fd(h);
			pthread_mutex_unlock(&h->lock);
		}
	} else if (starts(fmt, mhd_busy_wait)) {
		int wait;

		/* Not a busy loop while nothing is about to free a
		 * descriptor: this thread has no connection to hold up. */
		pthread_mutex_lock(&h->lock);
		wait = !h->closing;
		pthread_mutex_unlock(&h->lock);
		if (wait)
			usleep(5000);
	} else if (starts(fmt, mhd_args_full) && parsing.c) {
		pthread_mutex_lock(&h->lock);
		answer_instead(parsing.c, MHD_HTTP_URI_TOO_LONG);
		pthread_mutex_unlock(&h->lock);
	} else if (starts(fmt, mhd_length_large) || starts(fmt, mhd_length_bad)) {
		struct conn *c;

		pthread_mutex_lock(&h->lock);
		if ((c = bad_length(h)) != NULL)
			answer_instead(c, starts(fmt, mhd_length_large) ? MHD_HTTP_CONTENT_TOO_LARGE
			                                                : MHD_HTTP_BAD_REQUEST);
		pthread_mutex_unlock(&h->lock);
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	/* Per-connection events a client can cause at will: not warnings, or
	 * one client could flood the log. A failed bind: start_one() reports
	 * it, naming the address. */
	if (answered || strstr(msg, "connection limit") || strstr(msg, "handshake") ||
	    strstr(msg, "TLS") || strstr(msg, "closed") || strstr(msg, "Closing connection") ||
	    strstr(msg, "in pool") || strstr(msg, "Failed to bind") ||
	    strstr(msg, "Failed to send")) {
		log_debug("http: %s", msg);
		return;
	}
	pthread_mutex_lock(&h->quiet_lock);
	pass = quiet_pass(h, msg, &left_out, &since_ms);
	pthread_mutex_unlock(&h->quiet_lock);
	if (pass && left_out)
		log_warnx("http: %s (and %lu more like it in the last %llu s, not logged)", msg,
		          left_out, (unsigned long long)(since_ms / 1000));
	else if (pass)
		log_warnx("http: %s", msg);
}

/* Start one daemon on one address. */
static struct MHD_Daemon *start_one(struct server *s, const struct tcx_http_cfg *cfg,
                                    struct tcx_webconfig *web, const char *addr, int listen_fd,
                                    char *err, size_t errlen)
{
	/* ITC: MHD_quiesce_daemon() needs it, for reloads. poll(), not epoll:
	 * with epoll, libmicrohttpd 0.9.75's MHD_quiesce_daemon() and each
	 * worker's loop both remove the listen socket from the worker's epoll
	 * set, unsynchronized, and the second removal aborts the process
	 * ("Failed to remove listen FD from epoll set", seen once in a
	 * reload.sh run of 40 restarts under load). With poll() a quiesce only
	 * signals the workers. */
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC |
	                 MHD_ALLOW_SUSPEND_RESUME;
	struct sockaddr_storage ss;
	struct MHD_OptionItem opts[20];
	struct MHD_Daemon *d;
	char host[256];
	unsigned port;
	int n = 0, any;

	if (tcx_listen_split(addr, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "invalid listen address '%s'", addr);
		return NULL;
	}
	memset(&ss, 0, sizeof(ss));
	any = host[0] == '\0' || strcmp(host, "::") == 0;
	if (any) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)port);
		flags |= MHD_USE_DUAL_STACK;
	} else {
		struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
		int r = getaddrinfo(host, NULL, &hints, &ai);

		if (r != 0 || !ai) {
			snprintf(err, errlen, "listen address '%s': %s", addr, gai_strerror(r));
			return NULL;
		}
		memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
		if (ai->ai_family == AF_INET6) {
			((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
			flags |= MHD_USE_IPv6;
		} else {
			((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
		}
		freeaddrinfo(ai);
	}
	/* The logger first, or MHD logs the other options' problems itself. */
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s->h};
	if (listen_fd >= 0) /* taken over from the server this one replaces */
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL};
	else
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, 2, NULL};
	/* max_connections is enforced by on_connection(); the slots above it
	 * hold connections closed there until their thread cleans them up. */
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
	                                    2 * (intptr_t)s->h->max_connections, NULL};
	opts[n++] =
	        (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	                                    cfg->max_connections_per_ip < s->h->max_connections
	                                            ? cfg->max_connections_per_ip
	                                            : s->h->max_connections,
	                                    NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_log, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL};
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
	                                    (intptr_t)(cfg->timeout_s + 0.5), NULL};
	/* No SO_REUSEPORT: a second process on this address must fail, not
	 * share the port. A reload takes the listen socket over instead. */
	if (web && web->cert_pem) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, web->key_pem};
		opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, web->cert_pem};
		if (web->client_ca_pem && web->client_auth != TCX_CLIENT_AUTH_NONE)
			opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
			                                    web->client_ca_pem};
		if (web->tls_priorities)
			opts[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
			                                    web->tls_priorities};
	}
	opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, s->h, MHD_OPTION_ARRAY,
	                     opts, MHD_OPTION_END);
	if (!d && any && listen_fd < 0) {
		/* No IPv6 here: fall back to IPv4 only. */
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons((uint16_t)port);
		flags &= ~(unsigned)MHD_USE_DUAL_STACK;
		d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handler, s->h,
		                     MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
		if (d)
			log_warnx("http: %s: no IPv6, listening on 0.0.0.0:%u only", addr, port);
	}
	if (!d)
		snprintf(err, errlen, "cannot listen on %s: %s", addr,
		         errno ? strerror(errno) : "libmicrohttpd refused the settings");
	return d;
}

/* The file descriptors the daemon needs besides its HTTP connections and
 * its sockets in other network namespaces: the standard streams, the
 * collector's sockets in its own namespace, AgentX, the files a reload
 * reads, /proc. */
#define FDS_RESERVED 64
/* Those of each listen address: its socket and an eventfd per thread. */
#define FDS_PER_LISTEN 3

/* max_connections of each listen address of cfg, lowered (with a warning)
 * so that all of them fit in the soft RLIMIT_NOFILE as it is now; 0 when
 * not even one does, the cause in err. */
static unsigned fit_fds(const struct tcx_http_cfg *cfg, char *err, size_t errlen)
{
	unsigned long long n = cfg->n_listen, lim, fixed = FDS_RESERVED + n * FDS_PER_LISTEN, each;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return cfg->max_connections;
	lim = rl.rlim_cur;
	if (fixed + n * cfg->max_connections <= lim)
		return cfg->max_connections;
	each = lim > fixed ? (lim - fixed) / n : 0;
	if (!each) {
		snprintf(err, errlen,
		         "RLIMIT_NOFILE %llu leaves no file descriptor for HTTP connections: "
		         "%llu listen address%s and the rest of the daemon need %llu",
		         lim, n, n > 1 ? "es" : "", fixed);
		return 0;
	}
	log_warnx("http: max_connections %u on each of %llu listen address%s does not fit in "
	          "RLIMIT_NOFILE %llu with the %llu file descriptors the rest of the daemon "
	          "needs: each address takes %llu connections at most",
	          cfg->max_connections, n, n > 1 ? "es" : "", lim, fixed, each);
	return (unsigned)each;
}

struct tcx_http *tcx_http_start(struct tcx_state *st, const struct tcx_http_cfg *cfg,
                                struct tcx_webconfig *web, struct tcx_http *prev, char *err,
                                size_t errlen)
{
	unsigned max_connections = fit_fds(cfg, err, errlen);
	struct tcx_http *h = max_connections ? calloc(1, sizeof(*h)) : NULL;
	struct server *from[TCX_MAX_LISTEN];
	int e;

	if (!max_connections)
		return NULL;
	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->st = st;
	h->web = tcx_webconfig_ref(web);
	h->max_connections = max_connections;
	h->deadline_ms = (uint64_t)(cfg->timeout_s * 1000 + 0.5);
	h->max_stale = (size_t)cfg->max_stale_mib << 20;
	h->checks_per_ip = cfg->password_checks_per_ip;
	h->checks = cfg->password_checks;
	h->renders_per_ip = cfg->renders_per_ip;
	h->renders = cfg->renders;
	tcx_list_init(&h->readers);
	tcx_list_init(&h->pending);
	tcx_list_init(&h->rw);
	for (size_t i = 0; i < TCX_MAX_LISTEN; i++)
		tcx_list_init(&h->srv[i].waiting);
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->quiet_lock, NULL);
	tcx_cond_init_monotonic(&h->wake);
	if ((e = pthread_create(&h->reaper, NULL, reaper, h)) != 0) {
		snprintf(err, errlen, "cannot start a thread: %s", strerror(e));
		tcx_http_stop(h);
		return NULL;
	}
	h->reaper_running = 1;
	/* The server of prev on the same address, each used once. */
	for (size_t i = 0; i < cfg->n_listen; i++) {
		from[i] = NULL;
		for (size_t j = 0; prev && j < prev->n && !from[i]; j++) {
			struct server *o = &prev->srv[j];
			int used = 0;

			for (size_t k = 0; k < i; k++)
				used |= from[k] == o;
			if (!o->quiesced && !used && strcmp(o->addr, cfg->listen[i]) == 0)
				from[i] = o;
		}
	}
	/* Addresses of their own first, then the ones taken over from prev:
	 * when an address cannot be had (in use, say), prev still has every
	 * listen socket and goes on as before. */
	for (int takeover = 0; takeover < 2; takeover++) {
		for (size_t i = 0; i < cfg->n_listen; i++) {
			struct server *o = from[i];
			struct server *s = &h->srv[h->n];
			int fd = -1;

			if (!!o != takeover)
				continue;
			/* The same address as a running server: take over its
			 * listen socket, so that no connection is refused or
			 * reset meanwhile; the old server stops accepting and
			 * finishes what it has. */
			if (o) {
				fd = MHD_quiesce_daemon(o->d);
				if (fd != MHD_INVALID_SOCKET)
					o->quiesced = 1;
				else
					fd = -1;
			}
			s->h = h;
			s->tls = web && web->cert_pem;
			s->addr = strdup(cfg->listen[i]);
			errno = 0;
			s->d = s->addr ? start_one(s, cfg, web, cfg->listen[i], fd, err, errlen)
			               : NULL;
			if (!s->d) {
				if (!s->addr)
					snprintf(err, errlen, "out of memory");
				if (fd >= 0)
					close(fd);
				free(s->addr);
				s->addr = NULL;
				tcx_http_stop(h);
				return NULL;
			}
			pthread_mutex_lock(&h->lock);
			h->n++; /* the reaper looks at it from now on */
			pthread_cond_signal(&h->wake);
			pthread_mutex_unlock(&h->lock);
			log_info("listening on %s%s", cfg->listen[i],
			         web && web->cert_pem ? " (TLS)" : "");
		}
	}
	return h;
}

int tcx_http_handed_over(const struct tcx_http *h)
{
	for (size_t i = 0; h && i < h->n; i++)
		if (h->srv[i].quiesced)
			return 1;
	return 0;
}

#define QUIET_CHECKS 5 /* 10 ms apart */

void tcx_http_stop(struct tcx_http *h)
{
	int quiet[TCX_MAX_LISTEN] = {0}, draining = 1;
	struct pending *p;

	if (!h)
		return;
	/* Servers whose socket went to a successor finish the requests they
	 * have first (for up to 2 s, all of them together). One has no
	 * connection once it shows none for QUIET_CHECKS checks in a row: a
	 * worker thread may have accepted one just before the hand-over and
	 * not counted it yet (seen: 2 requests in 8683 cut off, under ASan,
	 * when one check of no connection was taken as final). */
	for (int w = 0; draining && w < 200; w++) {
		draining = 0;
		for (size_t i = 0; i < h->n; i++) {
			const union MHD_DaemonInfo *di;

			if (!h->srv[i].quiesced || quiet[i] >= QUIET_CHECKS)
				continue;
			di = MHD_get_daemon_info(h->srv[i].d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
			quiet[i] = !di ? QUIET_CHECKS : di->num_connections ? 0 : quiet[i] + 1;
			draining |= quiet[i] < QUIET_CHECKS;
		}
		if (draining)
			usleep(10000);
	}
	/* Password checks under way are let go of, and their connections
	 * resumed (MHD_stop_daemon() must find none suspended): they answer
	 * 503, or close. */
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	tcx_list_for_each(p, &h->pending, struct pending, node) {
		if (!p->chk)
			continue; /* resumed already */
		tcx_webconfig_check_end(p->chk);
		p->chk = NULL;
		if (!p->done)
			MHD_resume_connection(p->mc);
	}
	while (!tcx_list_empty(&h->rw)) /* taken again: rendered for, or refused */
		rwait_remove(tcx_list_first(&h->rw, struct conn, rw_node), 1);
	pthread_mutex_unlock(&h->lock);
	for (size_t i = 0; i < h->n; i++) {
		MHD_stop_daemon(h->srv[i].d);
		free(h->srv[i].addr);
	}
	if (h->reaper_running) {
		pthread_mutex_lock(&h->lock);
		h->stop = 1;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->reaper, NULL);
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->quiet_lock);
	tcx_webconfig_unref(h->web);
	free(h);
}
