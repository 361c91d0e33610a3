/* view: a live view of a running simulation in a web browser.  An HTTP
 * server (libmicrohttpd: a pool of 2 threads, so that many clients cost
 * the run at most those; a socket of its own)
 * serves a page's files and, to every request that carries the view's
 * random token, the latest frame (a subsample of the bodies with the run's
 * status, published by the simulation's thread) and a queue of controls
 * (pause, resume, step, write).  The simulation's thread never waits on a
 * client: between steps it asks orr_view_poll (two atomic loads while no
 * client waits), publishes a frame only when a client waits for a newer
 * one (at most max_fps a second, one frame shared by every client), and
 * takes the controls queued.  Clients pull frames one at a time (GET
 * /frame?after=SEQ answers once a frame newer than SEQ is published, or
 * 204 after a second; the request waits suspended, holding no thread), so
 * a slow or stalled page only gets fewer frames.
 *
 * Requests: GET / (index.html), GET /NAME (the page's files), GET /frame,
 * POST /control?cmd=pause|resume|step|snapshot|png; a request whose
 * body's length is said twice (two Content-Lengths, or one with a
 * Transfer-Encoding) is refused (400); all need token=TOKEN (403 without
 * it, compared in constant time, a NUL in it counted); a body on any
 * request is refused (413), an unknown path 404, another method 405, a bad
 * argument 400, a full control queue 429; nothing else happens on a
 * refused request.  Connections at once are limited (max_clients; more
 * are refused by the server); a connection's request line and headers
 * must come whole within 5 s of its opening, the next request's within
 * 10 s of an answer, else it is closed (a client trickling a header now
 * and then holds no slot for long). */
#ifndef ORR_VIEW_H
#define ORR_VIEW_H

#include <stddef.h>
#include "err.h"
#include "ksrc.h"

typedef struct orr_view orr_view;

typedef struct {
    const char *host;        /* IPv4 address to listen on; NULL: "127.0.0.1" */
    int port;                /* 1..65535, or 0: a free one */
    double max_fps;          /* frames a second at most (> 0); 0: 20 */
    int max_clients;         /* connections at once; 0: 64 */
    const orr_ksrc_file *files;   /* the page (copied pointers, must outlive the view):
                                     "index.html" is served at /; NULL-name terminated */
} orr_view_config;

/* The controls a page sends (POST /control?cmd=NAME). */
typedef enum {
    ORR_VIEW_NONE = 0,
    ORR_VIEW_PAUSE,
    ORR_VIEW_RESUME,
    ORR_VIEW_STEP,
    ORR_VIEW_SNAPSHOT,
    ORR_VIEW_PNG,
} orr_view_cmd;

/* orr_view_poll's flags. */
enum { ORR_VIEW_WANT_FRAME = 1, ORR_VIEW_HAS_COMMAND = 2 };

/* Starts the server on its own threads; *out owns it (orr_view_stop).  A
 * port in use, an address that is not this host's or not IPv4, fail with
 * a message naming them. */
orr_status orr_view_start(orr_view **out, const orr_view_config *c, orr_error *err);
/* Stops the server (every connection closed, its threads joined) and
 * frees the view.  NULL: nothing. */
void orr_view_stop(orr_view *v);

/* "http://127.0.0.1:PORT/?token=TOKEN" (the host as given). */
const char *orr_view_url(const orr_view *v);
int orr_view_port(const orr_view *v);
const char *orr_view_token(const orr_view *v);

/* For the simulation's thread, between steps: ORR_VIEW_WANT_FRAME when a
 * client waits for a frame newer than the last one published and the last
 * one is 1 / max_fps old, ORR_VIEW_HAS_COMMAND when controls are queued;
 * 0 (two atomic loads) when neither. */
int orr_view_poll(orr_view *v);
/* Waits up to ms milliseconds until orr_view_poll would return non-zero
 * (for a paused run: it keeps serving frames and controls); returns it. */
int orr_view_wait(orr_view *v, int ms);
/* The oldest queued control, ORR_VIEW_NONE when none. */
orr_view_cmd orr_view_take(orr_view *v);
/* Publishes a frame: the status (a JSON object, text of len bytes) and
 * nfloat floats (copied).  Every client waiting gets it. */
orr_status orr_view_publish(orr_view *v, const char *json, size_t len, const float *data,
                            size_t nfloat, orr_error *err);
/* Whether a client asked for a frame in the last `seconds` (a page open). */
int orr_view_watched(orr_view *v, double seconds);

/* The frame's bytes: "ORV1", three uint32 (little-endian): the JSON's
 * length padded to a multiple of 4, the frame's number (1, 2, ...: GET
 * /frame?after= takes it), the count of floats; the JSON padded with
 * spaces, the floats. */
#define ORR_VIEW_MAGIC "ORV1"

/* A control's name ("pause", ...), or NULL. */
const char *orr_view_cmd_name(orr_view_cmd c);

#endif
