/* view: the live view's HTTP server (libmicrohttpd) and the hand-over of
 * frames and controls between it and the simulation's thread (view.h). */
#include "view.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NCMD 16            /* controls queued at most */
#define WAIT_MS 1000       /* a frame request waits this long, then 204 */
#define THREADS 2          /* the server's threads (a pool): its CPU is bounded */
#define HEAD_S 5.0         /* a new connection's request line and headers arrive within this */
#define IDLE_S 10          /* between two requests of a connection, at most this */

/* A connection (MHD's socket context): until its request's line and
 * headers are all in (the handler called), a deadline; past it the timer
 * shuts the socket down, so that a client trickling a header now and then
 * cannot hold one of the max_clients slots for ever.  fd is a duplicate
 * of MHD's (ours to close): shutting it down ends the connection, and it
 * cannot be another connection's descriptor in the meantime. */
typedef struct conn_rec {
    int fd;                /* -1: none (dup failed): no deadline */
    double deadline;       /* monotonic seconds; 0: a request under way; under v->mu */
    struct conn_rec *next, *prev;
} conn_rec;

/* A frame request waiting (its connection suspended: it holds no thread)
 * for a frame newer than `after`, until `deadline`. */
typedef struct req {
    uint64_t after;
    double deadline;
    struct MHD_Connection *conn;
    struct req *next;      /* in the view's list of waiting requests */
    atomic_int waiting;    /* in the list (and suspended) */
} req;

/* A published frame, shared by the responses that send it. */
typedef struct {
    atomic_int refs;
    size_t len;
    char data[];
} frame;

struct orr_view {
    struct MHD_Daemon *daemon;
    const orr_ksrc_file *files;
    char *index;               /* index.html with the token in place of {{TOKEN}} */
    size_t index_len;
    char token[33];
    char url[160];
    int port;
    double min_interval;       /* seconds between frames */

    pthread_mutex_t mu;
    pthread_cond_t sim_cv;     /* a client waits for a frame, or a control came */
    frame *cur;                /* the latest frame (NULL before the first) */
    uint64_t seq;              /* frames published */
    req *waiting;              /* frame requests suspended until a frame or their deadline */
    int stopping;
    pthread_t timer;           /* resumes the requests past their deadline */
    int timer_started;
    pthread_cond_t timer_cv;   /* a request began waiting, a connection came, or stopping */
    conn_rec *conns;               /* every connection open */
    int cmds[NCMD];
    int cmd_head, cmd_count;

    atomic_int want;           /* a client waits for a frame newer than seq */
    atomic_int ncmd;           /* cmd_count, for the fast poll */
    double last_pub;           /* monotonic seconds (the simulation's thread only) */
    _Atomic double last_ask;   /* when a client last asked for a frame */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void frame_release(frame *f)
{
    if (f && atomic_fetch_sub(&f->refs, 1) == 1)
        free(f);
}

/* MHD's free callback gets the data pointer: its frame is just before. */
static void frame_release_data(void *data)
{
    frame_release((frame *)((char *)data - offsetof(frame, data)));
}

static const char *const cmd_names[] = {NULL, "pause", "resume", "step", "snapshot", "png"};

const char *orr_view_cmd_name(orr_view_cmd c)
{
    return c > ORR_VIEW_NONE && c <= ORR_VIEW_PNG ? cmd_names[c] : NULL;
}

/* ---- requests (the server's threads) ---- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, const char *type,
                             const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ok = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned code, const char *text)
{
    return reply(conn, code, "text/plain; charset=utf-8", text);
}

static const char *content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (dot && strcmp(dot, ".html") == 0)
        return "text/html; charset=utf-8";
    if (dot && strcmp(dot, ".js") == 0)
        return "text/javascript; charset=utf-8";
    if (dot && strcmp(dot, ".css") == 0)
        return "text/css; charset=utf-8";
    return "application/octet-stream";
}

/* Constant-time comparison of the token given (len bytes, as decoded: a
 * %00 in it counts) with ours. */
static int token_ok(const orr_view *v, const char *given, size_t len)
{
    if (!given || len != sizeof v->token - 1)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < sizeof v->token - 1; i++)
        diff |= (unsigned char)(given[i] ^ v->token[i]);
    return diff == 0;
}

static enum MHD_Result serve_file(orr_view *v, struct MHD_Connection *conn, const char *name)
{
    const char *data = NULL;
    size_t len = 0;
    if (strcmp(name, "index.html") == 0) {
        data = v->index;
        len = v->index_len;
    } else {
        for (const orr_ksrc_file *f = v->files; f && f->name; f++)
            if (strcmp(f->name, name) == 0) {
                data = f->text;
                len = f->len;
            }
    }
    if (!data)
        return refuse(conn, MHD_HTTP_NOT_FOUND, "not found\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", content_type(name));
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                            "img-src 'self' data:");
    enum MHD_Result ok = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* after = a decimal count (at most 19 digits), or -1. */
static long long parse_seq(const char *s)
{
    if (!s || !*s || strlen(s) > 18)
        return -1;
    long long x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        x = 10 * x + (*s - '0');
    }
    return x;
}

static void add_ms(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Resumes the waiting requests that wait no more: every one (all), or
 * those past their deadline; with v->mu held.  Each is answered when MHD
 * calls the handler again (answer_frame). */
static void resume_waiting(orr_view *v, int all)
{
    const double now = all ? 0 : now_s();
    for (req **p = &v->waiting; *p;) {
        req *r = *p;
        if (all || now >= r->deadline) {
            *p = r->next;
            atomic_store(&r->waiting, 0);
            MHD_resume_connection(r->conn);
        } else {
            p = &r->next;
        }
    }
    atomic_store(&v->want, v->waiting != NULL);
}

/* The timer: wakes while requests wait or connections are open, resumes
 * the requests past their deadline (they answer 204) and ends the
 * connections whose request has not come whole in time. */
static void *timer_main(void *arg)
{
    orr_view *v = arg;
    pthread_mutex_lock(&v->mu);
    while (!v->stopping) {
        if (!v->waiting && !v->conns) {
            pthread_cond_wait(&v->timer_cv, &v->mu);
            continue;
        }
        struct timespec ts;
        add_ms(&ts, 100);
        pthread_cond_timedwait(&v->timer_cv, &v->mu, &ts);
        resume_waiting(v, 0);
        const double now = now_s();
        for (conn_rec *c = v->conns; c; c = c->next)
            if (c->deadline > 0 && now >= c->deadline) {
                c->deadline = 0;
                shutdown(c->fd, SHUT_RDWR);   /* MHD sees it closed, and closes it */
            }
    }
    pthread_mutex_unlock(&v->mu);
    return NULL;
}

static enum MHD_Result send_frame(struct MHD_Connection *conn, frame *f)
{
    if (!f)
        return refuse(conn, MHD_HTTP_NO_CONTENT, "");
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(f->len, f->data, frame_release_data);
    if (!r) {
        frame_release(f);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result ok = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* GET /frame?after=SEQ: the first frame newer than SEQ.  None yet: the
 * connection is suspended (no thread waits) until a frame is published or
 * WAIT_MS pass (204 then: the page asks again). */
static enum MHD_Result serve_frame(orr_view *v, struct MHD_Connection *conn, long long after,
                                   void **con_cls)
{
    atomic_store(&v->last_ask, now_s());
    pthread_mutex_lock(&v->mu);
    const uint64_t a = (uint64_t)after > v->seq ? v->seq : (uint64_t)after;
    frame *f = NULL;
    if (v->seq > a && !v->stopping) {
        f = v->cur;
        atomic_fetch_add(&f->refs, 1);
    } else if (!v->stopping) {
        req *r = calloc(1, sizeof *r);
        if (r) {
            r->after = a;
            r->deadline = now_s() + WAIT_MS / 1000.0;
            r->conn = conn;
            atomic_init(&r->waiting, 1);
            r->next = v->waiting;
            v->waiting = r;
            *con_cls = r;
            MHD_suspend_connection(conn);
            atomic_store(&v->want, 1);
            pthread_cond_broadcast(&v->sim_cv);
            pthread_cond_broadcast(&v->timer_cv);
            pthread_mutex_unlock(&v->mu);
            return MHD_YES;
        }
    }
    pthread_mutex_unlock(&v->mu);
    return send_frame(conn, f);
}

/* A waiting request resumed: the frame, or 204. */
static enum MHD_Result answer_frame(orr_view *v, struct MHD_Connection *conn, req *r)
{
    pthread_mutex_lock(&v->mu);
    frame *f = v->seq > r->after && !v->stopping ? v->cur : NULL;
    if (f)
        atomic_fetch_add(&f->refs, 1);
    pthread_mutex_unlock(&v->mu);
    return send_frame(conn, f);
}

/* MHD's connection callback: a connection's record made (its deadline
 * for the first request) and freed. */
static void notify_conn(void *cls, struct MHD_Connection *mc, void **socket_context,
                        enum MHD_ConnectionNotificationCode code)
{
    orr_view *v = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn_rec *c = calloc(1, sizeof *c);
        if (!c)
            return;
        c->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
        if (c->fd < 0) {
            free(c);
            return;
        }
        pthread_mutex_lock(&v->mu);
        c->deadline = now_s() + HEAD_S;
        c->next = v->conns;
        if (v->conns)
            v->conns->prev = c;
        v->conns = c;
        pthread_cond_broadcast(&v->timer_cv);
        pthread_mutex_unlock(&v->mu);
        *socket_context = c;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conn_rec *c = *socket_context;
        pthread_mutex_lock(&v->mu);
        if (c->prev)
            c->prev->next = c->next;
        else
            v->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        pthread_mutex_unlock(&v->mu);
        close(c->fd);
        free(c);
        *socket_context = NULL;
    }
}

/* The connection's deadline: 0 while a request is under way, else when
 * the next request must have come whole. */
static void set_deadline(orr_view *v, struct MHD_Connection *mc, double deadline)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    conn_rec *c = ci ? ci->socket_context : NULL;
    if (!c)
        return;
    pthread_mutex_lock(&v->mu);
    c->deadline = deadline;
    pthread_mutex_unlock(&v->mu);
}

/* MHD's request-completed callback: a waiting request's state freed; the
 * next request of the connection has IDLE_S to come whole. */
static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    orr_view *v = cls;
    (void)code;
    set_deadline(v, conn, now_s() + IDLE_S);
    if (*con_cls && *con_cls != (void *)v) {
        req *r = *con_cls;
        /* resumed requests left the list first; one still in it (closed
         * while suspended, which MHD does not do) is taken out */
        if (atomic_load(&r->waiting)) {
            pthread_mutex_lock(&v->mu);
            for (req **p = &v->waiting; *p; p = &(*p)->next)
                if (*p == r) {
                    *p = r->next;
                    break;
                }
            pthread_mutex_unlock(&v->mu);
        }
        free(r);
    }
    *con_cls = NULL;
}

static enum MHD_Result serve_control(orr_view *v, struct MHD_Connection *conn, const char *cmd)
{
    int c = 0;
    for (int k = 1; k <= ORR_VIEW_PNG && cmd; k++)
        if (strcmp(cmd, cmd_names[k]) == 0)
            c = k;
    if (!c)
        return refuse(conn, MHD_HTTP_BAD_REQUEST,
                      "cmd must be pause, resume, step, snapshot or png\n");
    pthread_mutex_lock(&v->mu);
    int full = v->cmd_count == NCMD;
    if (!full) {
        v->cmds[(v->cmd_head + v->cmd_count) % NCMD] = c;
        v->cmd_count++;
        atomic_store(&v->ncmd, v->cmd_count);
        pthread_cond_broadcast(&v->sim_cv);
    }
    pthread_mutex_unlock(&v->mu);
    if (full)
        return refuse(conn, MHD_HTTP_TOO_MANY_REQUESTS, "too many controls queued\n");
    return reply(conn, MHD_HTTP_OK, "text/plain; charset=utf-8", "ok\n");
}

/* The headers that frame a request's body, counted. */
struct framing {
    int lengths, encodings;
    const char *length;   /* the Content-Length */
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct framing *fr = cls;
    (void)kind;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        fr->lengths++;
        fr->length = value;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        fr->encodings++;
    }
    return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    orr_view *v = cls;
    (void)version;
    (void)upload_data;
    if (*con_cls == (void *)v) {   /* a body after the refusal below was queued: ignored */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*con_cls)   /* a frame request resumed */
        return answer_frame(v, conn, *con_cls);
    *con_cls = v;
    set_deadline(v, conn, 0);   /* the request is in: no deadline while it is answered */
    /* the body's framing: one Content-Length, or a Transfer-Encoding, never
     * both nor twice (which one counts would be the server's guess) */
    struct framing fr = {0, 0, NULL};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &fr);
    if (fr.lengths > 1 || (fr.lengths && fr.encodings) || fr.encodings > 1)
        return refuse(conn, MHD_HTTP_BAD_REQUEST, "malformed request: Content-Length or "
                      "Transfer-Encoding given twice, or both\n");
    const char *tok = NULL;
    size_t tok_len = 0;
    if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "token", 5, &tok,
                                      &tok_len) != MHD_YES || !token_ok(v, tok, tok_len))
        return refuse(conn, MHD_HTTP_FORBIDDEN, "a valid token is required\n");
    if (fr.encodings || (fr.length && strcmp(fr.length, "0") != 0))
        return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body is taken\n");
    const int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    const int post = strcmp(method, "POST") == 0;
    if (!get && !post)
        return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, "/control") == 0) {
        if (!post)
            return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "/control takes POST\n");
        return serve_control(v, conn, MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
                                                                  "cmd"));
    }
    if (!get)
        return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strcmp(url, "/frame") == 0) {
        const char *a = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "after");
        long long after = a ? parse_seq(a) : 0;
        if (after < 0)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, "after must be a frame number\n");
        return serve_frame(v, conn, after, con_cls);
    }
    if (strcmp(url, "/") == 0)
        return serve_file(v, conn, "index.html");
    if (url[0] == '/' && url[1] && !strchr(url + 1, '/'))
        return serve_file(v, conn, url + 1);
    return refuse(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

static void quiet_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;
}

/* ---- start and stop ---- */

static orr_status make_index(orr_view *v, orr_error *err)
{
    const orr_ksrc_file *f = v->files;
    while (f && f->name && strcmp(f->name, "index.html") != 0)
        f++;
    if (!f || !f->name)
        return orr_fail(err, ORR_ERR_ARG, "view: the page has no index.html");
    const char *mark = "{{TOKEN}}";
    size_t count = 0;
    for (const char *p = f->text; (p = strstr(p, mark)); p += strlen(mark))
        count++;
    v->index = malloc(f->len + count * (sizeof v->token) + 1);
    if (!v->index)
        return orr_fail(err, ORR_ERR_NOMEM, "view: out of memory");
    char *o = v->index;
    const char *p = f->text, *q;
    while ((q = strstr(p, mark))) {
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, v->token, sizeof v->token - 1);
        o += sizeof v->token - 1;
        p = q + strlen(mark);
    }
    size_t rest = strlen(p);
    memcpy(o, p, rest + 1);
    v->index_len = (size_t)(o - v->index) + rest;
    return ORR_OK;
}

static int listen_on(const char *host, int port, int *bound, orr_error *err)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        orr_fail(err, ORR_ERR_ARG, "view: host '%s' is not an IPv4 address (e.g. 127.0.0.1)",
                 host);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        orr_fail(err, ORR_ERR_IO, "view: socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE)
            orr_fail(err, ORR_ERR_ARG, "view: port %d on %s is in use (choose another, or 0 "
                     "for a free one)", port, host);
        else
            orr_fail(err, ORR_ERR_ARG, "view: cannot listen on %s port %d: %s", host, port,
                     strerror(e));
        return -1;
    }
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *bound = ntohs(a.sin_port);
    return fd;
}

orr_status orr_view_start(orr_view **out, const orr_view_config *c, orr_error *err)
{
    *out = NULL;
    const char *host = c->host ? c->host : "127.0.0.1";
    if (c->port < 0 || c->port > 65535)
        return orr_fail(err, ORR_ERR_ARG, "view: port must be 0..65535 (got %d)", c->port);
    if (c->max_fps < 0 || c->max_fps != c->max_fps)
        return orr_fail(err, ORR_ERR_ARG, "view: max_fps must be positive");
    if (strlen(host) > 64)
        return orr_fail(err, ORR_ERR_ARG, "view: host too long");
    orr_view *v = calloc(1, sizeof *v);
    if (!v)
        return orr_fail(err, ORR_ERR_NOMEM, "view: out of memory");
    v->files = c->files;
    v->min_interval = 1.0 / (c->max_fps > 0 ? c->max_fps : 20.0);
    v->last_pub = -1e30;
    atomic_init(&v->want, 0);
    atomic_init(&v->ncmd, 0);
    atomic_init(&v->last_ask, -1e30);
    pthread_mutex_init(&v->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->sim_cv, &ca);
    pthread_cond_init(&v->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        orr_view_stop(v);
        return orr_fail(err, ORR_ERR_IO, "view: getrandom: %s", strerror(errno));
    }
    for (int i = 0; i < 16; i++)
        snprintf(v->token + 2 * i, 3, "%02x", rnd[i]);
    orr_status st = make_index(v, err);
    int fd = st ? -1 : listen_on(host, c->port, &v->port, err);
    if (st || fd < 0) {
        orr_view_stop(v);
        return st ? st : err->code;
    }
    const unsigned clients = (unsigned)(c->max_clients > 0 ? c->max_clients : 64);
    v->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME,
        0, NULL, NULL, handle, v,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)THREADS,
        MHD_OPTION_NOTIFY_COMPLETED, completed, v,
        MHD_OPTION_NOTIFY_CONNECTION, notify_conn, v,
        MHD_OPTION_CONNECTION_LIMIT, clients,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
        MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
        MHD_OPTION_END);
    if (!v->daemon) {
        close(fd);
        orr_view_stop(v);
        return orr_fail(err, ORR_ERR_IO, "view: the HTTP server (libmicrohttpd) did not start");
    }
    if (pthread_create(&v->timer, NULL, timer_main, v) != 0) {
        orr_view_stop(v);
        return orr_fail(err, ORR_ERR_IO, "view: cannot start the timer thread");
    }
    v->timer_started = 1;
    snprintf(v->url, sizeof v->url, "http://%s:%d/?token=%s", host, v->port, v->token);
    *out = v;
    return ORR_OK;
}

void orr_view_stop(orr_view *v)
{
    if (!v)
        return;
    pthread_mutex_lock(&v->mu);
    v->stopping = 1;
    if (v->daemon)
        resume_waiting(v, 1);   /* MHD stops only with no connection suspended */
    pthread_cond_broadcast(&v->timer_cv);
    pthread_mutex_unlock(&v->mu);
    if (v->timer_started)
        pthread_join(v->timer, NULL);
    if (v->daemon)
        MHD_stop_daemon(v->daemon);   /* answers the resumed, joins its threads */
    frame_release(v->cur);
    pthread_cond_destroy(&v->timer_cv);
    pthread_cond_destroy(&v->sim_cv);
    pthread_mutex_destroy(&v->mu);
    free(v->index);
    free(v);
}

const char *orr_view_url(const orr_view *v)
{
    return v->url;
}

int orr_view_port(const orr_view *v)
{
    return v->port;
}

const char *orr_view_token(const orr_view *v)
{
    return v->token;
}

/* ---- the simulation's side ---- */

int orr_view_poll(orr_view *v)
{
    int flags = atomic_load_explicit(&v->ncmd, memory_order_relaxed) ? ORR_VIEW_HAS_COMMAND : 0;
    if (atomic_load_explicit(&v->want, memory_order_relaxed) &&
        now_s() - v->last_pub >= v->min_interval)
        flags |= ORR_VIEW_WANT_FRAME;
    return flags;
}

int orr_view_wait(orr_view *v, int ms)
{
    int flags = orr_view_poll(v);
    if (flags)
        return flags;
    /* a frame wanted sooner than the rate allows: sleep until it may go */
    if (atomic_load(&v->want)) {
        double wait = v->min_interval - (now_s() - v->last_pub);
        if (wait * 1000 < ms)
            ms = wait > 0 ? (int)(wait * 1000) + 1 : 0;
    }
    struct timespec deadline;
    add_ms(&deadline, ms);
    pthread_mutex_lock(&v->mu);
    while (!v->cmd_count && !atomic_load(&v->want))
        if (pthread_cond_timedwait(&v->sim_cv, &v->mu, &deadline) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&v->mu);
    if (atomic_load(&v->want) && now_s() - v->last_pub < v->min_interval) {
        struct timespec ts = {0, 0};
        double wait = v->min_interval - (now_s() - v->last_pub);
        if (wait * 1000 > ms)
            wait = ms / 1000.0;
        ts.tv_nsec = wait > 0 ? (long)(wait * 1e9) : 0;
        nanosleep(&ts, NULL);
    }
    return orr_view_poll(v);
}

orr_view_cmd orr_view_take(orr_view *v)
{
    if (!atomic_load(&v->ncmd))
        return ORR_VIEW_NONE;
    pthread_mutex_lock(&v->mu);
    int c = ORR_VIEW_NONE;
    if (v->cmd_count) {
        c = v->cmds[v->cmd_head];
        v->cmd_head = (v->cmd_head + 1) % NCMD;
        v->cmd_count--;
        atomic_store(&v->ncmd, v->cmd_count);
    }
    pthread_mutex_unlock(&v->mu);
    return (orr_view_cmd)c;
}

orr_status orr_view_publish(orr_view *v, const char *json, size_t len, const float *data,
                            size_t nfloat, orr_error *err)
{
    const size_t padded = (len + 3) / 4 * 4;
    if (padded > UINT32_MAX || nfloat >= ((size_t)1 << 32))
        return orr_fail(err, ORR_ERR_ARG, "view: frame too large");
    const size_t bytes = 16 + padded + sizeof(float) * nfloat;
    frame *f = malloc(sizeof *f + bytes);
    if (!f)
        return orr_fail(err, ORR_ERR_NOMEM, "view: out of memory for a frame of %zu bytes",
                        bytes);
    atomic_init(&f->refs, 1);
    f->len = bytes;
    memcpy(f->data, ORR_VIEW_MAGIC, 4);
    const uint32_t head[3] = {(uint32_t)padded, (uint32_t)(v->seq + 1), (uint32_t)nfloat};
    for (int k = 0; k < 3; k++) {   /* little-endian */
        const unsigned char le[4] = {head[k] & 255, (head[k] >> 8) & 255, (head[k] >> 16) & 255,
                                     head[k] >> 24};
        memcpy(f->data + 4 + 4 * k, le, 4);
    }
    memcpy(f->data + 16, json, len);
    memset(f->data + 16 + len, ' ', padded - len);
    if (nfloat)
        memcpy(f->data + 16 + padded, data, sizeof(float) * nfloat);
    pthread_mutex_lock(&v->mu);
    frame *old = v->cur;
    v->cur = f;
    v->seq++;
    resume_waiting(v, 1);   /* every one waiting gets this frame */
    pthread_mutex_unlock(&v->mu);
    frame_release(old);
    v->last_pub = now_s();
    return ORR_OK;
}

int orr_view_watched(orr_view *v, double seconds)
{
    return now_s() - atomic_load(&v->last_ask) < seconds;
}
