/* test_view: the live view's server (core/io/view.c) over real sockets on
 * 127.0.0.1: the token on every request, the refusals (403, 404, 405,
 * 400, 413, 429; a body's length said twice 400, a token with a NUL 403)
 * with nothing queued, a client trickling its headers closed after 5 s,
 * the controls in order, frames pulled one at a time (long poll, 204 after a second without one), the frame
 * rate bound, many clients at once served one frame, and the errors of a
 * port in use, a bad port and a bad host. */
#include "testutil.h"
#include "view.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const orr_ksrc_file page[] = {
    {"index.html", "<p>{{TOKEN}}</p><p>{{TOKEN}}</p>", 32},
    {"a.js", "var a = 1;", 10},
    {NULL, NULL, 0},
};

typedef struct {
    int code;
    char *body;   /* heap, NUL-terminated */
    size_t len;
} response;

/* Sends req (a whole request) to 127.0.0.1:port and reads the response
 * until the server closes; code -1 when nothing came. */
static response http(int port, const char *req, size_t reqlen)
{
    response r = {-1, NULL, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return r;
    }
    for (size_t off = 0; off < reqlen;) {
        ssize_t w = send(fd, req + off, reqlen - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (len == cap)
            buf = realloc(buf, (cap *= 2) + 1);
        ssize_t got = recv(fd, buf + len, cap - len, 0);
        if (got <= 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    buf[len] = 0;
    if (len > 12 && strncmp(buf, "HTTP/1.", 7) == 0)
        r.code = atoi(buf + 9);
    char *body = strstr(buf, "\r\n\r\n");
    if (body) {
        r.len = len - (size_t)(body + 4 - buf);
        r.body = malloc(r.len + 1);
        memcpy(r.body, body + 4, r.len + 1);
    }
    free(buf);
    return r;
}

static int get(int port, const char *method, const char *target, const char *extra)
{
    char req[4096];
    int len = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: "
                       "close\r\n\r\n", method, target, extra ? extra : "");
    response r = http(port, req, (size_t)len);
    free(r.body);
    return r.code;
}

static orr_view *start(int port, double fps, orr_error *err)
{
    orr_view_config c = {0};
    c.port = port;
    c.max_fps = fps;
    c.files = page;
    orr_view *v = NULL;
    TU_OK(orr_view_start(&v, &c, err), err);
    return v;
}

static void test_token_and_refusals(void **state)
{
    orr_error err = {0};
    orr_view *v = start(0, 0, &err);
    const int port = orr_view_port(v);
    const char *tok = orr_view_token(v);
    char want[128], t[512];
    assert_int_equal(strlen(tok), 32);
    for (const char *p = tok; *p; p++)
        assert_non_null(strchr("0123456789abcdef", *p));
    snprintf(want, sizeof want, "http://127.0.0.1:%d/?token=%s", port, tok);
    assert_string_equal(orr_view_url(v), want);

    /* the page with the token put in, its files */
    snprintf(t, sizeof t, "GET /?token=%s HTTP/1.1\r\nConnection: close\r\n\r\n", tok);
    response r = http(port, t, strlen(t));
    assert_int_equal(r.code, 200);
    snprintf(want, sizeof want, "<p>%s</p><p>%s</p>", tok, tok);
    assert_string_equal(r.body, want);
    free(r.body);
    snprintf(t, sizeof t, "/a.js?token=%s", tok);
    assert_int_equal(get(port, "GET", t, NULL), 200);

    /* no token, a wrong one (same length), an empty one: 403 for everything */
    char wrong[33];
    memcpy(wrong, tok, 33);
    wrong[31] = wrong[31] == '0' ? '1' : '0';
    const char *targets[] = {"/", "/a.js", "/frame", "/control?cmd=pause"};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(get(port, k == 3 ? "POST" : "GET", targets[k], NULL), 403);
        snprintf(t, sizeof t, "%s%stoken=%s", targets[k], k == 3 ? "&" : "?", wrong);
        assert_int_equal(get(port, k == 3 ? "POST" : "GET", t, NULL), 403);
        snprintf(t, sizeof t, "%s%stoken=", targets[k], k == 3 ? "&" : "?");
        assert_int_equal(get(port, k == 3 ? "POST" : "GET", t, NULL), 403);
    }
    /* with the token: an unknown path, another method, a bad argument, a body */
    snprintf(t, sizeof t, "/nothing?token=%s", tok);
    assert_int_equal(get(port, "GET", t, NULL), 404);
    snprintf(t, sizeof t, "/a/b?token=%s", tok);
    assert_int_equal(get(port, "GET", t, NULL), 404);
    snprintf(t, sizeof t, "/?token=%s", tok);
    assert_int_equal(get(port, "PUT", t, NULL), 405);
    assert_int_equal(get(port, "DELETE", t, NULL), 405);
    snprintf(t, sizeof t, "/control?token=%s&cmd=pause", tok);
    assert_int_equal(get(port, "GET", t, NULL), 405);
    snprintf(t, sizeof t, "/control?token=%s&cmd=explode", tok);
    assert_int_equal(get(port, "POST", t, NULL), 400);
    snprintf(t, sizeof t, "/control?token=%s", tok);
    assert_int_equal(get(port, "POST", t, NULL), 400);
    snprintf(t, sizeof t, "/frame?token=%s&after=-1", tok);
    assert_int_equal(get(port, "GET", t, NULL), 400);
    snprintf(t, sizeof t, "/frame?token=%s&after=12x", tok);
    assert_int_equal(get(port, "GET", t, NULL), 400);
    snprintf(t, sizeof t, "/control?token=%s&cmd=pause", tok);
    assert_int_equal(get(port, "POST", t, "Content-Length: 5\r\n"), 413);
    assert_int_equal(get(port, "POST", t, "Transfer-Encoding: chunked\r\n"), 413);
    /* the body's length said twice, or two ways: 400, no command (a pause
     * here would show in the poll below) */
    assert_int_equal(get(port, "POST", t, "Content-Length: 0\r\nContent-Length: 5\r\n"), 400);
    assert_int_equal(get(port, "POST", t, "Content-Length: 0\r\nContent-Length: 0\r\n"), 400);
    assert_int_equal(get(port, "POST", t, "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
                     400);
    /* the token with a NUL after it (%00): not the token */
    snprintf(t, sizeof t, "/control?token=%s%%00&cmd=pause", tok);
    assert_int_equal(get(port, "POST", t, NULL), 403);
    /* no token: 403 before the method or a body is looked at */
    assert_int_equal(get(port, "PUT", "/control?cmd=pause", "Content-Length: 5\r\n"), 403);
    snprintf(t, sizeof t, "/control?token=%s&cmd=pause", tok);
    /* an oversized request (a 64 KiB header): refused by the server, 4xx */
    char *big = malloc(70000);
    int len = snprintf(big, 70000, "GET /?token=%s HTTP/1.1\r\nX-Big: ", tok);
    memset(big + len, 'a', 65536);
    len += 65536;
    len += snprintf(big + len, 70000 - (size_t)len, "\r\nConnection: close\r\n\r\n");
    r = http(port, big, (size_t)len);
    assert_true(r.code >= 400 && r.code < 500);
    free(r.body);
    free(big);
    /* garbage: no crash, no command, the server still answers */
    r = http(port, "\x01\x02 nonsense\r\n\r\n", 15);
    free(r.body);
    assert_int_equal(orr_view_poll(v), 0);
    assert_int_equal(orr_view_take(v), ORR_VIEW_NONE);
    snprintf(t, sizeof t, "/?token=%s", tok);
    assert_int_equal(get(port, "GET", t, NULL), 200);
    orr_view_stop(v);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A client that sends a request's first lines, then a header line every
 * 0.25 s, never the end: closed 5 s after it connected (not when idle:
 * it never is), while a whole request is answered. */
static void test_header_deadline(void **state)
{
    orr_error err = {0};
    orr_view *v = start(0, 0, &err);
    const int port = orr_view_port(v);
    char url[128];
    snprintf(url, sizeof url, "/?token=%s", orr_view_token(v));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    const double t0 = mono();
    const char *head = "GET /frame?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    assert_true(send(fd, head, strlen(head), MSG_NOSIGNAL) > 0);
    double closed = -1;
    while (closed < 0 && mono() - t0 < 20) {
        struct timespec ts = {0, 250000000L};
        nanosleep(&ts, NULL);
        char c;
        ssize_t got = recv(fd, &c, 1, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
            send(fd, "X-a: b\r\n", 8, MSG_NOSIGNAL) < 0)
            closed = mono() - t0;
        else if (mono() - t0 > 1 && mono() - t0 < 1.3)   /* meanwhile: a whole request */
            assert_int_equal(get(port, "GET", url, NULL), 200);
    }
    close(fd);
    printf("view: a trickling client closed after %.2f s\n", closed);
    assert_true(closed >= 4.5 && closed <= 7);
    orr_view_stop(v);
}

static void test_controls(void **state)
{
    orr_error err = {0};
    orr_view *v = start(0, 0, &err);
    const int port = orr_view_port(v);
    const char *names[] = {"pause", "step", "resume", "snapshot", "png"};
    const orr_view_cmd cmds[] = {ORR_VIEW_PAUSE, ORR_VIEW_STEP, ORR_VIEW_RESUME,
                                 ORR_VIEW_SNAPSHOT, ORR_VIEW_PNG};
    char t[256];
    for (int k = 0; k < 5; k++) {
        snprintf(t, sizeof t, "/control?token=%s&cmd=%s", orr_view_token(v), names[k]);
        assert_int_equal(get(port, "POST", t, NULL), 200);
    }
    assert_int_equal(orr_view_poll(v), ORR_VIEW_HAS_COMMAND);
    for (int k = 0; k < 5; k++) {
        orr_view_cmd c = orr_view_take(v);
        assert_int_equal(c, cmds[k]);
        assert_string_equal(orr_view_cmd_name(c), names[k]);
    }
    assert_int_equal(orr_view_take(v), ORR_VIEW_NONE);
    assert_int_equal(orr_view_poll(v), 0);
    /* 16 queued at most: the 17th is refused (429), the 16 kept */
    snprintf(t, sizeof t, "/control?token=%s&cmd=step", orr_view_token(v));
    for (int k = 0; k < 16; k++)
        assert_int_equal(get(port, "POST", t, NULL), 200);
    assert_int_equal(get(port, "POST", t, NULL), 429);
    for (int k = 0; k < 16; k++)
        assert_int_equal(orr_view_take(v), ORR_VIEW_STEP);
    assert_int_equal(orr_view_take(v), ORR_VIEW_NONE);
    orr_view_stop(v);
}

typedef struct {
    int port;
    char target[256];
    response r;
} client;

static void *fetch(void *arg)
{
    client *c = arg;
    char req[512];
    int len = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nConnection: close\r\n\r\n",
                       c->target);
    c->r = http(c->port, req, (size_t)len);
    return NULL;
}

static uint32_t le32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

/* Waits up to 5 s for orr_view_poll to want a frame. */
static int wait_want(orr_view *v)
{
    for (int k = 0; k < 500; k++) {
        if (orr_view_poll(v) & ORR_VIEW_WANT_FRAME)
            return 1;
        usleep(10000);
    }
    return 0;
}

static void test_frames(void **state)
{
    orr_error err = {0};
    orr_view *v = start(0, 5, &err);   /* 5 frames a second at most */
    const int port = orr_view_port(v);
    assert_int_equal(orr_view_poll(v), 0);
    assert_false(orr_view_watched(v, 10));
    enum { NC = 40 };
    client *c = calloc(NC, sizeof *c);
    pthread_t th[NC];
    for (int k = 0; k < NC; k++) {
        c[k].port = port;
        snprintf(c[k].target, sizeof c[k].target, "/frame?token=%s&after=0", orr_view_token(v));
        pthread_create(&th[k], NULL, fetch, &c[k]);
    }
    assert_true(wait_want(v));
    assert_true(orr_view_watched(v, 10));
    usleep(100000);   /* every client waiting */
    const char json[] = "{\"t\":1.5}";
    const float data[] = {1, 2, 3, 4.5f, -1e30f};
    TU_OK(orr_view_publish(v, json, strlen(json), data, 5, &err), &err);
    for (int k = 0; k < NC; k++) {
        pthread_join(th[k], NULL);
        response *r = &c[k].r;
        assert_int_equal(r->code, 200);
        assert_int_equal(r->len, 16 + 12 + 20);
        assert_memory_equal(r->body, "ORV1", 4);
        assert_int_equal(le32(r->body + 4), 12);   /* 9 bytes padded */
        assert_int_equal(le32(r->body + 8), 1);    /* frame 1 */
        assert_int_equal(le32(r->body + 12), 5);
        assert_memory_equal(r->body + 16, "{\"t\":1.5}   ", 12);
        assert_memory_equal(r->body + 28, data, sizeof data);
        free(r->body);
    }
    /* one frame served them all: nothing more wanted */
    assert_int_equal(orr_view_poll(v), 0);
    /* a newer one: wanted only 1/5 s after the last was published */
    snprintf(c[0].target, sizeof c[0].target, "/frame?token=%s&after=1", orr_view_token(v));
    pthread_create(&th[0], NULL, fetch, &c[0]);
    const double t0 = orr_now_s();
    assert_true(wait_want(v));
    assert_true(orr_now_s() - t0 > 0.1);
    TU_OK(orr_view_publish(v, json, strlen(json), data, 0, &err), &err);
    pthread_join(th[0], NULL);
    assert_int_equal(c[0].r.code, 200);
    assert_int_equal(le32(c[0].r.body + 8), 2);
    free(c[0].r.body);
    /* none published: 204 after about a second; a frame number from an
     * older server (beyond the last) waits for the next one */
    snprintf(c[0].target, sizeof c[0].target, "/frame?token=%s&after=999", orr_view_token(v));
    const double t1 = orr_now_s();
    fetch(&c[0]);
    assert_int_equal(c[0].r.code, 204);
    assert_true(orr_now_s() - t1 > 0.9 && orr_now_s() - t1 < 5);
    free(c[0].r.body);
    /* orr_view_wait: returns at once on a control, else after its time */
    const double t2 = orr_now_s();
    assert_int_equal(orr_view_wait(v, 200) & ORR_VIEW_HAS_COMMAND, 0);
    assert_true(orr_now_s() - t2 >= 0.19);
    free(c);
    orr_view_stop(v);
}

/* A client waiting for a frame when the view stops: answered, joined. */
static void test_stop_with_clients(void **state)
{
    orr_error err = {0};
    orr_view *v = start(0, 0, &err);
    client c = {orr_view_port(v), "", {0, NULL, 0}};
    snprintf(c.target, sizeof c.target, "/frame?token=%s&after=0", orr_view_token(v));
    pthread_t th;
    pthread_create(&th, NULL, fetch, &c);
    assert_true(wait_want(v));
    const double t0 = orr_now_s();
    orr_view_stop(v);
    assert_true(orr_now_s() - t0 < 2);
    pthread_join(th, NULL);
    free(c.r.body);
}

static void test_errors(void **state)
{
    orr_error err = {0};
    orr_view *a = start(0, 0, &err), *b = NULL;
    orr_view_config c = {0};
    c.files = page;
    c.port = orr_view_port(a);
    assert_int_equal(orr_view_start(&b, &c, &err), ORR_ERR_ARG);
    assert_null(b);
    char want[200];
    snprintf(want, sizeof want, "view: port %d on 127.0.0.1 is in use (choose another, or 0 "
             "for a free one)", c.port);
    assert_string_equal(err.msg, want);
    orr_view_stop(a);
    c.port = 70000;
    assert_int_equal(orr_view_start(&b, &c, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "view: port must be 0..65535 (got 70000)");
    c.port = 0;
    c.host = "localhost";
    assert_int_equal(orr_view_start(&b, &c, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "view: host 'localhost' is not an IPv4 address (e.g. 127.0.0.1)");
    c.host = "192.0.2.1";   /* TEST-NET-1: not this host's */
    assert_int_equal(orr_view_start(&b, &c, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "view: cannot listen on 192.0.2.1 port 0: "));
    c.host = NULL;
    const orr_ksrc_file nopage[] = {{"a.js", "1", 1}, {NULL, NULL, 0}};
    c.files = nopage;
    assert_int_equal(orr_view_start(&b, &c, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "view: the page has no index.html");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_and_refusals),
        cmocka_unit_test(test_header_deadline),
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_stop_with_clients),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
