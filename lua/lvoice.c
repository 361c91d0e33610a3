/* lvoice: what a script writes to standard output under mpirun (lvoice.h).
 * The file descriptor 1 itself is redirected, so print, io.write,
 * io.stdout:write and what a command started by os.execute writes are
 * treated alike.  Rank 0 keeps its output as it is; another rank's goes to
 * /dev/null, or with --all-ranks through a pipe to a thread that writes
 * every line to the real standard output behind "[rank R] ". */
#include "lvoice.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int all_ranks;      /* --all-ranks */
static int saved = -1;     /* the real standard output while redirected */
static int pipe_in = -1;   /* the pump's end of the pipe (--all-ranks) */
static pthread_t pump_thread;
static char prefix[32];
static size_t prefix_len;

void orr_lua_voice_all(int on)
{
    all_ranks = on;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copies the pipe to the real standard output, each line behind the prefix,
 * a line in one write where it fits the buffer.  (Open MPI forwards a
 * rank's output in pieces of its own, so with much output a line of one
 * rank may still be split by another's: LUA_API.md says so.)  A write that
 * fails (the terminal gone) drops the rest but keeps reading: the script
 * never blocks on it. */
static void *pump(void *arg)
{
    (void)arg;
    char in[4096], out[4096 + 64];
    size_t used = 0;
    int at_start = 1, ok = 1;
    for (;;) {
        ssize_t n = read(pipe_in, in, sizeof in);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t k = 0; k < n; k++) {
            if (at_start) {
                memcpy(out + used, prefix, prefix_len);
                used += prefix_len;
                at_start = 0;
            }
            out[used++] = in[k];
            if (in[k] == '\n')
                at_start = 1;
            if (in[k] == '\n' || used + prefix_len + 1 > sizeof out) {
                ok = ok && write_all(saved, out, used) == 0;
                used = 0;
            }
        }
    }
    if (used && ok)   /* a last line without its newline, as written */
        write_all(saved, out, used);
    return NULL;
}

void orr_lua_voice_end(void)
{
    if (saved < 0)
        return;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);   /* the pipe's last writer closed: the pump sees its end */
    if (pipe_in >= 0) {
        pthread_join(pump_thread, NULL);
        close(pipe_in);
        pipe_in = -1;
    }
    close(saved);
    saved = -1;
}

int orr_lua_voice_begin(int rank, int size)
{
    static int registered;
    if (size <= 1 || saved >= 0 || (rank == 0 && !all_ranks))
        return 0;
    fflush(stdout);
    int fds[2] = {-1, -1}, target = -1;
    if (all_ranks) {
        if (pipe(fds) != 0)
            return -1;
        target = fds[1];
    } else if ((target = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
        return -1;
    }
    const int keep = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    int err = keep < 0 || dup2(target, STDOUT_FILENO) < 0 ? errno : 0;
    close(target);
    if (!err && all_ranks) {
        /* line by line, as to the terminal mpirun's stdout would be: a line
         * reaches the pump when written (in order with a child's output,
         * and not lost in a buffer when the job is ended) */
        setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
        snprintf(prefix, sizeof prefix, "[rank %d] ", rank);
        prefix_len = strlen(prefix);
        pipe_in = fds[0];
        saved = keep;
        fcntl(pipe_in, F_SETFD, FD_CLOEXEC);
        err = pthread_create(&pump_thread, NULL, pump, NULL);
        if (err) {   /* back as it was (the pipe's end closed below) */
            dup2(keep, STDOUT_FILENO);
            pipe_in = -1;
        }
    }
    if (err) {
        if (keep >= 0)
            close(keep);
        if (fds[0] >= 0 && pipe_in < 0)
            close(fds[0]);
        saved = -1;
        errno = err;
        return -1;
    }
    saved = keep;
    if (!registered)
        registered = atexit(orr_lua_voice_end) == 0;
    return 0;
}
