/* movie: MP4 (H.264) output through libswscale, libavcodec (libx264) and
 * libavformat (see movie.h).  The muxer writes through an AVIOContext of
 * our own on the temporary file's descriptor (outfile.h), so a write error
 * keeps the system's reason; faststart's second pass reads the temporary
 * file back by its name. */
#include "movie.h"
#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#define ENCODER "libx264"
#define MAX_SIDE 16384
#define IO_BUFFER 65536

struct orr_movie {
    orr_outfile out;          /* the temporary file; out.fd is the muxer's */
    char *path;               /* the target, for messages (heap) */
    int io_errno;             /* the first failed write's or seek's errno, 0 */
    AVFormatContext *oc;
    AVIOContext *pb;
    AVCodecContext *cc;
    AVStream *st;
    AVFrame *frame;
    AVPacket *pkt;
    struct SwsContext *sws;
    int width, height;
    long frames;
};

void orr_movie_options_default(orr_movie_options *o)
{
    o->fps = 30;
    o->crf = 20;
}

/* ---- FFmpeg's log: kept, never printed ----------------------------------------- */

/* The last error FFmpeg logged on this thread, for the message of a call
 * that failed ("" when none). */
static _Thread_local char last_log[256];

static void log_callback(void *avcl, int level, const char *fmt, va_list vl)
{
    (void)avcl;
    if (level > AV_LOG_ERROR)
        return;
    vsnprintf(last_log, sizeof last_log, fmt, vl);
    size_t len = strlen(last_log);
    while (len > 0 && (last_log[len - 1] == '\n' || last_log[len - 1] == ' '))
        last_log[--len] = '\0';
}

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void install_log(void)
{
    av_log_set_callback(log_callback);
}

/* "cannot write 'PATH': WHAT: REASON", the reason from the system (a
 * failed write) or FFmpeg (its error code and the last thing it logged). */
static orr_status av_failed(orr_movie *m, const char *path, int averr, orr_error *err,
                            const char *what)
{
    if (m && m->io_errno)
        return orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s", path, strerror(m->io_errno));
    char why[AV_ERROR_MAX_STRING_SIZE] = "";
    av_strerror(averr, why, sizeof why);
    orr_status code = averr == AVERROR(ENOMEM) ? ORR_ERR_NOMEM : ORR_ERR_IO;
    if (last_log[0])
        return orr_fail(err, code, "cannot write '%s': %s: %s (%s)", path, what, why, last_log);
    return orr_fail(err, code, "cannot write '%s': %s: %s", path, what, why);
}

/* ---- the muxer's output: the temporary file's descriptor ----------------------- */

static int io_write(void *opaque, uint8_t *buf, int size)
{
    orr_movie *m = opaque;
    int left = size;
    while (left > 0) {
        ssize_t w = write(m->out.fd, buf, (size_t)left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            if (!m->io_errno)
                m->io_errno = e;
            return AVERROR(e);
        }
        buf += w;
        left -= (int)w;
    }
    return size;
}

static int64_t io_seek(void *opaque, int64_t offset, int whence)
{
    orr_movie *m = opaque;
    if (whence & AVSEEK_SIZE) {
        struct stat sb;
        return fstat(m->out.fd, &sb) == 0 ? (int64_t)sb.st_size : AVERROR(errno);
    }
    off_t at = lseek(m->out.fd, (off_t)offset, whence & ~AVSEEK_FORCE);
    if (at < 0) {
        int e = errno;
        if (!m->io_errno)
            m->io_errno = e;
        return AVERROR(e);
    }
    return (int64_t)at;
}

/* ---- checks -------------------------------------------------------------------- */

orr_status orr_movie_check(const char *path, int width, int height, const orr_movie_options *o,
                           orr_error *err)
{
    if (!(o->fps >= ORR_MOVIE_MIN_FPS && o->fps <= ORR_MOVIE_MAX_FPS))
        return orr_fail(err, ORR_ERR_ARG, "cannot write '%s': fps must be a number from %g to "
                        "%d (got %g)", path, ORR_MOVIE_MIN_FPS, ORR_MOVIE_MAX_FPS, o->fps);
    if (o->crf < 0 || o->crf > 51)
        return orr_fail(err, ORR_ERR_ARG, "cannot write '%s': crf must be an integer from 0 to "
                        "51 (got %d)", path, o->crf);
    if (width < 2 || height < 2 || width > MAX_SIDE || height > MAX_SIDE || width % 2 ||
        height % 2)
        return orr_fail(err, ORR_ERR_ARG, "cannot write '%s': H.264 (4:2:0) needs an even width "
                        "and height from 2 to %d (got %dx%d)", path, MAX_SIDE, width, height);
    if (!avcodec_find_encoder_by_name(ENCODER))
        return orr_fail(err, ORR_ERR_ARG, "cannot write '%s': this libavcodec has no H.264 "
                        "encoder '" ENCODER "' (Debian's libavcodec59 has it)", path);
    return ORR_OK;
}

/* ---- a movie ------------------------------------------------------------------- */

/* Frees what m holds (the temporary file stays for the caller). */
static void release(orr_movie *m)
{
    sws_freeContext(m->sws);
    av_frame_free(&m->frame);
    av_packet_free(&m->pkt);
    avcodec_free_context(&m->cc);   /* joins libx264's threads */
    avformat_free_context(m->oc);
    if (m->pb) {
        av_freep(&m->pb->buffer);
        avio_context_free(&m->pb);
    }
    free(m->path);
    free(m);
}

void orr_movie_abort(orr_movie *m)
{
    if (!m)
        return;
    orr_outfile_abort(&m->out);
    release(m);
}

long orr_movie_frames(const orr_movie *m)
{
    return m->frames;
}

/* The encoder, stream, scaler and header of a movie whose file is open. */
static orr_status setup(orr_movie *m, const orr_movie_options *o, orr_error *err)
{
    const char *path = m->path;
    const AVCodec *codec = avcodec_find_encoder_by_name(ENCODER);
    int rc = avformat_alloc_output_context2(&m->oc, NULL, "mp4", m->out.tmp);
    if (rc < 0)
        return av_failed(m, path, rc, err, "libavformat (mp4)");
    uint8_t *buf = av_malloc(IO_BUFFER);
    m->pb = buf ? avio_alloc_context(buf, IO_BUFFER, 1, m, NULL, io_write, io_seek) : NULL;
    if (!m->pb) {
        av_free(buf);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    m->oc->pb = m->pb;
    m->oc->flags |= AVFMT_FLAG_CUSTOM_IO;

    m->cc = avcodec_alloc_context3(codec);
    m->frame = av_frame_alloc();
    m->pkt = av_packet_alloc();
    if (!m->cc || !m->frame || !m->pkt)
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
    const AVRational rate = av_d2q(o->fps, 100000);
    AVCodecContext *cc = m->cc;
    cc->width = m->width;
    cc->height = m->height;
    cc->pix_fmt = AV_PIX_FMT_YUV420P;
    cc->time_base = av_inv_q(rate);
    cc->framerate = rate;
    cc->gop_size = (int)fmax(1, fmin(600, round(2 * o->fps)));   /* a key frame each 2 s */
    cc->color_range = AVCOL_RANGE_MPEG;
    cc->colorspace = AVCOL_SPC_BT709;
    cc->color_primaries = AVCOL_PRI_BT709;
    cc->color_trc = AVCOL_TRC_BT709;
    if (m->oc->oformat->flags & AVFMT_GLOBALHEADER)
        cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    char crf[16];
    snprintf(crf, sizeof crf, "%d", o->crf);
    av_opt_set(cc->priv_data, "crf", crf, 0);
    av_opt_set(cc->priv_data, "preset", "medium", 0);
    if ((rc = avcodec_open2(cc, codec, NULL)) < 0)
        return av_failed(m, path, rc, err, "cannot open the H.264 encoder " ENCODER);

    m->st = avformat_new_stream(m->oc, NULL);
    if (!m->st)
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
    if ((rc = avcodec_parameters_from_context(m->st->codecpar, cc)) < 0)
        return av_failed(m, path, rc, err, "libavcodec");
    m->st->time_base = cc->time_base;
    m->st->avg_frame_rate = rate;

    m->frame->format = cc->pix_fmt;
    m->frame->width = m->width;
    m->frame->height = m->height;
    if ((rc = av_frame_get_buffer(m->frame, 0)) < 0)
        return av_failed(m, path, rc, err, "libavutil");
    m->sws = sws_getContext(m->width, m->height, AV_PIX_FMT_RGB24, m->width, m->height,
                            AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!m->sws)
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': libswscale cannot convert RGB "
                        "to YUV 4:2:0 at %dx%d", path, m->width, m->height);
    /* RGB in full range to BT.709 in limited range, as the stream says */
    const int *bt709 = sws_getCoefficients(SWS_CS_ITU709);
    sws_setColorspaceDetails(m->sws, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16);

    AVDictionary *mux = NULL;
    av_dict_set(&mux, "movflags", "+faststart", 0);
    rc = avformat_write_header(m->oc, &mux);
    av_dict_free(&mux);
    if (rc < 0)
        return av_failed(m, path, rc, err, "libavformat cannot write the MP4 header");
    return ORR_OK;
}

orr_status orr_movie_open(orr_movie **out, const char *path, int width, int height,
                          const orr_movie_options *o, orr_error *err)
{
    *out = NULL;
    pthread_once(&log_once, install_log);
    last_log[0] = '\0';
    orr_status st = orr_movie_check(path, width, height, o, err);
    if (st)
        return st;
    orr_movie *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
    }
    m->width = width;
    m->height = height;
    if ((st = orr_outfile_begin(&m->out, path, 0, err)) != ORR_OK) {
        release(m);
        return st;
    }
    if ((st = setup(m, o, err)) != ORR_OK) {
        orr_movie_abort(m);
        return st;
    }
    *out = m;
    return ORR_OK;
}

/* Sends frame (NULL: the end) to the encoder and writes what comes out. */
static orr_status encode(orr_movie *m, AVFrame *frame, orr_error *err)
{
    int rc = avcodec_send_frame(m->cc, frame);
    if (rc < 0)
        return av_failed(m, m->path, rc, err, "H.264 encoder");
    for (;;) {
        rc = avcodec_receive_packet(m->cc, m->pkt);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
            return ORR_OK;
        if (rc < 0)
            return av_failed(m, m->path, rc, err, "H.264 encoder");
        if (m->pkt->duration == 0)
            m->pkt->duration = 1;   /* one picture: the last one's length too */
        av_packet_rescale_ts(m->pkt, m->cc->time_base, m->st->time_base);
        m->pkt->stream_index = m->st->index;
        rc = av_interleaved_write_frame(m->oc, m->pkt);   /* takes the packet */
        if (rc < 0 || m->io_errno)
            return av_failed(m, m->path, rc, err, "libavformat");
    }
}

orr_status orr_movie_add(orr_movie *m, const uint8_t *rgb, orr_error *err)
{
    last_log[0] = '\0';
    int rc = av_frame_make_writable(m->frame);
    if (rc < 0)
        return av_failed(m, m->path, rc, err, "libavutil");
    const uint8_t *src[1] = {rgb};
    const int stride[1] = {3 * m->width};
    sws_scale(m->sws, src, stride, 0, m->height, m->frame->data, m->frame->linesize);
    m->frame->pts = m->frames;
    orr_status st = encode(m, m->frame, err);
    if (!st)
        m->frames++;
    return st;
}

orr_status orr_movie_finish(orr_movie *m, orr_error *err)
{
    last_log[0] = '\0';
    orr_status st = encode(m, NULL, err);
    if (!st) {
        int rc = av_write_trailer(m->oc);
        avio_flush(m->pb);
        if (rc < 0 || m->io_errno)
            st = av_failed(m, m->path, rc, err, "libavformat cannot write the MP4 index");
    }
    if (st) {
        orr_movie_abort(m);
        return st;
    }
    st = orr_outfile_commit(&m->out, err);   /* closes the descriptor either way */
    release(m);
    return st;
}

/* ---- a movie of PNG files ------------------------------------------------------ */

/* Reads the PNG at path as 8-bit RGB into *rgb (heap, grown as needed). */
static orr_status read_png(const char *path, uint8_t **rgb, size_t *cap, int *w, int *h,
                           orr_error *err)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return orr_read_failed(path, err, "%s", strerror(errno));
    if (!png_image_begin_read_from_stdio(&img, fp)) {
        fclose(fp);
        return orr_read_failed(path, err, "not a PNG file libpng can read (%s)", img.message);
    }
    img.format = PNG_FORMAT_RGB;
    size_t need = PNG_IMAGE_SIZE(img);
    if (need > *cap) {
        uint8_t *p = realloc(*rgb, need);
        if (!p) {
            png_image_free(&img);
            fclose(fp);
            return orr_read_failed(path, err, "out of memory for %ux%u pixels", img.width,
                                   img.height);
        }
        *rgb = p;
        *cap = need;
    }
    int ok = png_image_finish_read(&img, NULL, *rgb, 0, NULL);
    fclose(fp);
    if (!ok) {
        orr_status st = orr_read_failed(path, err, "libpng: %s", img.message);
        png_image_free(&img);
        return st;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return ORR_OK;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 || errno != ENOENT;
}

orr_status orr_movie_from_pngs(const char *out, const char *pattern, long start,
                               const orr_movie_options *o, long *frames, int *width,
                               int *height, orr_error *err)
{
    char path[4096], first[4096];
    int numbered = 0;
    orr_status st = orr_outfile_expand(pattern, start < 0 ? 0 : start, path, sizeof path,
                                       &numbered, err);
    if (st)
        return st;
    if (!numbered)
        return orr_fail(err, ORR_ERR_ARG, "the frames' pattern '%s' has no frame number (give "
                        "one integer conversion, e.g. frames/f_%%04d.png)", pattern);
    long k = start < 0 ? 0 : start;
    if (start < 0 && !exists(path)) {   /* a series from 1 */
        char one[4096];
        if (orr_outfile_expand(pattern, 1, one, sizeof one, NULL, err))
            return err ? err->code : ORR_ERR_ARG;
        if (!exists(one))
            return orr_read_failed(path, err, "%s (nor '%s': a series starts at 0 or 1)",
                                   strerror(ENOENT), one);
        memcpy(path, one, sizeof path);
        k = 1;
    }
    snprintf(first, sizeof first, "%s", path);
    uint8_t *rgb = NULL;
    size_t cap = 0;
    orr_movie *m = NULL;
    int w0 = 0, h0 = 0;
    long count = 0;
    for (;; k++) {
        if (count > 0) {
            if ((st = orr_outfile_expand(pattern, k, path, sizeof path, NULL, err)) != ORR_OK)
                break;
            if (!exists(path))
                break;
        }
        int w = 0, h = 0;
        if ((st = read_png(path, &rgb, &cap, &w, &h, err)) != ORR_OK)
            break;
        if (count == 0) {
            w0 = w;
            h0 = h;
            if ((st = orr_movie_open(&m, out, w, h, o, err)) != ORR_OK)
                break;
        } else if (w != w0 || h != h0) {
            st = orr_fail(err, ORR_ERR_ARG, "'%s' is %dx%d but the first frame '%s' is %dx%d "
                          "(every frame of a movie has one size)", path, w, h, first, w0, h0);
            break;
        }
        if ((st = orr_movie_add(m, rgb, err)) != ORR_OK)
            break;
        count++;
    }
    free(rgb);
    if (st) {
        orr_movie_abort(m);
        return st;
    }
    if ((st = orr_movie_finish(m, err)) != ORR_OK)
        return st;
    if (frames)
        *frames = count;
    if (width)
        *width = w0;
    if (height)
        *height = h0;
    return ORR_OK;
}
