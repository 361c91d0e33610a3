/* test_movie: MP4 (H.264) movies, decoded back with libavformat and
 * libavcodec: the frame count, size, codec, pixel format, colour tags,
 * duration = frames / fps and the index at the front (faststart); each
 * decoded frame's mean luminance against its picture's (BT.709, limited
 * range) within a tolerance, so order and colour are right; movies from a
 * simulation through the frame writer (worker threads and none) against
 * the PNG frames of the same renders; errors with their exact messages
 * (odd sizes, options, a path under a file, a full disk, a failed commit
 * leaving the old file, a frame of another size, a finished movie, a
 * movie's failure reported once in queue order); the command line's job
 * from a PNG series (a missing first frame, mixed sizes, a bad pattern). */
#include "testutil.h"

#include <png.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>

#include "frames.h"
#include "movie.h"
#include "render.h"

static char dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* ---- decoding ------------------------------------------------------------------ */

typedef struct {
    int width, height;
    char codec[32];
    int pix_fmt, color_space, color_range;
    double duration;        /* the stream's, seconds */
    double fps;             /* its average frame rate */
    long frames;            /* decoded */
    double luma[256];       /* each decoded frame's mean Y (0..255), up to 256 */
    int moov_first;         /* the index before the media data (faststart) */
} decoded;

/* Decodes every frame of the movie at path (fails the test when it
 * cannot). */
static void decode(const char *path, decoded *d)
{
    memset(d, 0, sizeof *d);
    AVFormatContext *fc = NULL;
    if (avformat_open_input(&fc, path, NULL, NULL) < 0)
        fail_msg("libavformat cannot open %s", path);
    assert_true(avformat_find_stream_info(fc, NULL) >= 0);
    assert_int_equal(fc->nb_streams, 1);
    AVStream *st = fc->streams[0];
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    assert_non_null(codec);
    snprintf(d->codec, sizeof d->codec, "%s", avcodec_get_name(st->codecpar->codec_id));
    d->width = st->codecpar->width;
    d->height = st->codecpar->height;
    d->pix_fmt = st->codecpar->format;
    d->color_space = st->codecpar->color_space;
    d->color_range = st->codecpar->color_range;
    d->duration = st->duration * av_q2d(st->time_base);
    d->fps = av_q2d(st->avg_frame_rate);
    AVCodecContext *cc = avcodec_alloc_context3(codec);
    assert_true(avcodec_parameters_to_context(cc, st->codecpar) >= 0);
    assert_true(avcodec_open2(cc, codec, NULL) >= 0);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *fr = av_frame_alloc();
    int eof = 0;
    while (!eof) {
        int rc = av_read_frame(fc, pkt);
        if (rc < 0) {
            eof = 1;
            avcodec_send_packet(cc, NULL);
        } else {
            avcodec_send_packet(cc, pkt);
            av_packet_unref(pkt);
        }
        while (avcodec_receive_frame(cc, fr) == 0) {
            double sum = 0;
            for (int y = 0; y < fr->height; y++)
                for (int x = 0; x < fr->width; x++)
                    sum += fr->data[0][(size_t)y * (size_t)fr->linesize[0] + (size_t)x];
            if (d->frames < 256)
                d->luma[d->frames] = sum / ((double)fr->width * fr->height);
            d->frames++;
        }
    }
    av_frame_free(&fr);
    av_packet_free(&pkt);
    avcodec_free_context(&cc);
    avformat_close_input(&fc);
    /* the top-level boxes: moov before mdat */
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char h[8];
    long at = 0;
    int moov = -1, mdat = -1, k = 0;
    while (fseek(fp, at, SEEK_SET) == 0 && fread(h, 1, 8, fp) == 8) {
        unsigned long len = (unsigned long)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
        if (memcmp(h + 4, "moov", 4) == 0)
            moov = k;
        if (memcmp(h + 4, "mdat", 4) == 0)
            mdat = k;
        if (len < 8)
            break;
        at += (long)len;
        k++;
    }
    fclose(fp);
    d->moov_first = moov >= 0 && mdat >= 0 && moov < mdat;
}

/* The mean luminance of an RGB picture as the movie codes it: BT.709,
 * limited range (16..235). */
static double luma_of(const uint8_t *rgb, int w, int h)
{
    double sum = 0;
    for (size_t k = 0; k < (size_t)w * (size_t)h; k++)
        sum += 0.2126 * rgb[3 * k] + 0.7152 * rgb[3 * k + 1] + 0.0722 * rgb[3 * k + 2];
    return 16 + 219.0 / 255.0 * sum / ((double)w * h);
}

/* A test picture: a horizontal gradient in red, a disc whose place moves
 * with k, and a brightness that grows with k (each frame's mean apart). */
static void picture(uint8_t *rgb, int w, int h, int k)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
            double cx = (0.2 + 0.02 * k) * w, cy = 0.5 * h, r = 0.15 * h;
            int in = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
            p[0] = (uint8_t)(255 * x / (w - 1));
            p[1] = (uint8_t)(in ? 230 : 4 * k);
            p[2] = (uint8_t)(in ? 40 : 2 * k);
        }
}

static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        fail_msg("libpng cannot read %s: %s", path, img.message);
    img.format = PNG_FORMAT_RGB;
    uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(buf);
    if (!png_image_finish_read(&img, NULL, buf, 0, NULL))
        fail_msg("libpng cannot decode %s: %s", path, img.message);
    *w = (int)img.width;
    *h = (int)img.height;
    return buf;
}

static int temporaries(const char *sub)
{
    return tu_temporaries(tmp_path(sub));
}

/* ---- the encoder --------------------------------------------------------------- */

/* 37 pictures of 320 x 240 at 24 fps: what comes back is what went in. */
static void test_movie_roundtrip(void **state)
{
    (void)state;
    const int w = 320, h = 240, n = 37;
    uint8_t *rgb = malloc(3 * (size_t)w * h);
    double want[37];
    orr_movie_options o;
    orr_movie_options_default(&o);
    assert_true(o.fps == 30 && o.crf == 20);
    o.fps = 24;
    o.crf = 18;
    orr_movie *m = NULL;
    orr_error err = {0};
    const char *p = tmp_path("rt/a.mp4");
    TU_OK(orr_movie_open(&m, p, w, h, &o, &err), &err);
    for (int k = 0; k < n; k++) {
        picture(rgb, w, h, k);
        want[k] = luma_of(rgb, w, h);
        TU_OK(orr_movie_add(m, rgb, &err), &err);
        assert_int_equal(orr_movie_frames(m), k + 1);
    }
    assert_int_equal(access(p, F_OK), -1);   /* not in place before it is finished */
    TU_OK(orr_movie_finish(m, &err), &err);
    assert_int_equal(temporaries("rt"), 0);
    decoded d;
    decode(p, &d);
    assert_string_equal(d.codec, "h264");
    assert_int_equal(d.width, w);
    assert_int_equal(d.height, h);
    assert_int_equal(d.frames, n);
    assert_int_equal(d.pix_fmt, AV_PIX_FMT_YUV420P);
    assert_int_equal(d.color_space, AVCOL_SPC_BT709);
    assert_int_equal(d.color_range, AVCOL_RANGE_MPEG);
    assert_true(fabs(d.duration - n / 24.0) < 1e-9);
    assert_true(fabs(d.fps - 24) < 1e-9);
    assert_true(d.moov_first);
    for (int k = 0; k < n; k++) {
        if (fabs(d.luma[k] - want[k]) > 1.0)
            fail_msg("frame %d: mean luminance %.3f, its picture's %.3f", k, d.luma[k], want[k]);
        if (k > 0)   /* in order: each frame's mean apart from the one before */
            assert_true(d.luma[k] - d.luma[k - 1] > 1.5);
    }
    /* a fractional rate and the lossless end of crf */
    o.fps = 29.97;
    o.crf = 0;
    p = tmp_path("rt/b.mp4");
    TU_OK(orr_movie_open(&m, p, 64, 32, &o, &err), &err);
    for (int k = 0; k < 5; k++) {
        picture(rgb, 64, 32, 3 * k);
        TU_OK(orr_movie_add(m, rgb, &err), &err);
    }
    TU_OK(orr_movie_finish(m, &err), &err);
    decode(p, &d);
    assert_int_equal(d.frames, 5);
    assert_true(fabs(d.fps - 29.97) < 1e-9);
    assert_true(fabs(d.duration - 5 / 29.97) < 1e-3);
    free(rgb);
}

static void test_movie_errors(void **state)
{
    (void)state;
    orr_movie_options o;
    orr_movie_options_default(&o);
    orr_error err = {0};
    orr_movie *m = NULL;
    assert_int_equal(orr_movie_open(&m, "x.mp4", 801, 600, &o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'x.mp4': H.264 (4:2:0) needs an even width and "
                                 "height from 2 to 16384 (got 801x600)");
    assert_null(m);
    assert_int_equal(orr_movie_check("x.mp4", 0, 2, &o, &err), ORR_ERR_ARG);
    o.fps = 0;
    assert_int_equal(orr_movie_check("x.mp4", 8, 8, &o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'x.mp4': fps must be a number from 0.01 to 1000 "
                                 "(got 0)");
    o.fps = 0.0099;   /* below the least rate FFmpeg takes (1/fps: a time base) */
    assert_int_equal(orr_movie_check("x.mp4", 8, 8, &o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'x.mp4': fps must be a number from 0.01 to 1000 "
                                 "(got 0.0099)");
    o.fps = 0.01;
    assert_int_equal(orr_movie_check("x.mp4", 8, 8, &o, &err), ORR_OK);
    o.fps = 30;
    o.crf = 52;
    assert_int_equal(orr_movie_check("x.mp4", 8, 8, &o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'x.mp4': crf must be an integer from 0 to 51 (got "
                                 "52)");
    o.crf = 20;
    /* under a file: the directory cannot be made */
    FILE *fp = fopen(tmp_path("plain"), "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(orr_movie_open(&m, tmp_path("plain/x.mp4"), 16, 16, &o, &err), ORR_ERR_IO);
    char want[1200];
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a directory",
             tmp_path("plain/x.mp4"), tmp_path("plain"));
    assert_string_equal(err.msg, want);
    /* an old movie stays when a new one fails: a full disk (the header's
     * write), a failed commit, an abort */
    const int w = 64, h = 48;
    uint8_t *rgb = malloc(3 * (size_t)w * h);
    picture(rgb, w, h, 0);
    const char *p = tmp_path("old/m.mp4");
    TU_OK(orr_movie_open(&m, p, w, h, &o, &err), &err);
    TU_OK(orr_movie_add(m, rgb, &err), &err);
    TU_OK(orr_movie_finish(m, &err), &err);
    decoded d;
    decode(p, &d);
    assert_int_equal(d.frames, 1);
    setenv("ORRERY_TEST_DISK_FULL", "1", 1);
    orr_status st = orr_movie_open(&m, p, w, h, &o, &err);
    for (int k = 0; !st && k < 200; k++)   /* the writes may come with the frames */
        st = orr_movie_add(m, rgb, &err);
    if (!st)
        st = orr_movie_finish(m, &err);
    else
        orr_movie_abort(m);
    unsetenv("ORRERY_TEST_DISK_FULL");
    assert_int_equal(st, ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': No space left on device", p);
    assert_string_equal(err.msg, want);
    setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
    TU_OK(orr_movie_open(&m, p, w, h, &o, &err), &err);
    for (int k = 0; k < 3; k++)
        TU_OK(orr_movie_add(m, rgb, &err), &err);
    assert_int_equal(orr_movie_finish(m, &err), ORR_ERR_IO);
    unsetenv("ORRERY_TEST_WRITE_FAIL");
    snprintf(want, sizeof want, "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is "
             "set)", p);
    assert_string_equal(err.msg, want);
    TU_OK(orr_movie_open(&m, p, w, h, &o, &err), &err);
    TU_OK(orr_movie_add(m, rgb, &err), &err);
    TU_OK(orr_movie_add(m, rgb, &err), &err);
    orr_movie_abort(m);
    orr_movie_abort(NULL);
    decode(p, &d);
    assert_int_equal(d.frames, 1);   /* the old one */
    assert_int_equal(temporaries("old"), 0);
    free(rgb);
}

/* ---- through the frame writer: a simulation's frames --------------------------- */

/* A CPU simulation: a clump and a few bodies scattered, in the xy plane. */
static orr_sim *clump(void)
{
    enum { N = 300 };
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = N;
    c.backend = ORR_BACKEND_CPU;
    c.tune = ORR_SIM_TUNE_OFF;
    orr_error err = {0};
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    double *p;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    uint64_t seed = 11;
    for (int i = 0; i < N; i++) {
        double r = i < 250 ? 0.1 : 0.9;
        p[4 * i] = -0.5 + r * (tu_rand(&seed) - 0.5);
        p[4 * i + 1] = r * (tu_rand(&seed) - 0.5);
        p[4 * i + 2] = 0;
        p[4 * i + 3] = 1.0 / N;
    }
    orr_sim_touch(s);
    return s;
}

/* Moves the clump by dx. */
static void shift(orr_sim *s, double dx)
{
    double *p;
    orr_error err = {0};
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    for (long i = 0; i < 250; i++)
        p[4 * i] += dx;
    orr_sim_touch(s);
}

/* n frames of the moving clump into a PNG series and a movie, by a writer
 * of `threads` workers; every decoded frame against its PNG. */
static void sim_movie(const char *tag, int threads, int n)
{
    orr_sim *s = clump();
    orr_frames *f = NULL;
    orr_error err = {0};
    TU_OK(orr_frames_create(&f, threads, 0, &err), &err);
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = 160;
    o.height = 96;
    o.extent_mode = ORR_EXTENT_BOX;
    o.box[0] = -1;
    o.box[1] = 1;
    o.box[2] = -0.6;
    o.box[3] = 0.6;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    orr_movie_options mo;
    orr_movie_options_default(&mo);
    mo.fps = 12;
    mo.crf = 16;
    char movie[512], png[64];
    snprintf(movie, sizeof movie, "%s", tmp_path(tag));
    snprintf(movie + strlen(movie), sizeof movie - strlen(movie), "/m.mp4");
    for (int k = 0; k < n; k++) {
        snprintf(png, sizeof png, "%s/f_%02d.png", tag, k);
        TU_OK(orr_frames_render_to(f, s, tmp_path(png), movie, &mo, &o, &v, &err), &err);
        shift(s, 0.05);
        if (k == n / 2)   /* the movie stays open: frames wait, the movie takes more */
            TU_OK(orr_frames_wait(f, &err), &err);
    }
    assert_int_equal(orr_frames_movies_open(f), 1);
    TU_OK(orr_frames_flush(f, &err), &err);
    assert_int_equal(orr_frames_movies_open(f), 0);
    decoded d;
    decode(movie, &d);
    assert_int_equal(d.frames, n);
    assert_int_equal(d.width, 160);
    assert_int_equal(d.height, 96);
    assert_true(fabs(d.duration - n / 12.0) < 1e-9);
    for (int k = 0; k < n; k++) {
        int w, h;
        snprintf(png, sizeof png, "%s/f_%02d.png", tag, k);
        uint8_t *rgb = read_png(tmp_path(png), &w, &h);
        double want = luma_of(rgb, w, h);
        free(rgb);
        if (fabs(d.luma[k] - want) > 0.5)
            fail_msg("%s: frame %d: mean luminance %.3f, its PNG's %.3f", tag, k, d.luma[k],
                     want);
    }
    /* a finished movie takes no more frames */
    assert_int_equal(orr_frames_render_to(f, s, NULL, movie, &mo, &o, &v, &err), ORR_ERR_ARG);
    char want[1200];
    snprintf(want, sizeof want, "cannot add a frame to '%s': the movie was finished (by a flush) "
             "with %d frames; a finished movie takes no more (give another path)", movie, n);
    assert_string_equal(err.msg, want);
    orr_frames_destroy(f);
    orr_sim_destroy(s);
}

static void test_frames_movie(void **state)
{
    (void)state;
    sim_movie("w2", 2, 24);
    sim_movie("w0", 0, 9);
    sim_movie("w1", 1, 9);
}

/* What a frame of a movie is told at once, and a movie's failure in the
 * background: reported once, in queue order, its later frames counted. */
static void test_frames_movie_errors(void **state)
{
    (void)state;
    orr_sim *s = clump();
    orr_frames *f = NULL;
    orr_error err = {0};
    TU_OK(orr_frames_create(&f, 2, 0, &err), &err);
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = o.height = 32;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    const char *mv = tmp_path("e/a.mp4");
    char want[2048];
    TU_OK(orr_frames_render_to(f, s, NULL, mv, NULL, &o, &v, &err), &err);
    o.width = 64;
    assert_int_equal(orr_frames_render_to(f, s, NULL, mv, NULL, &o, &v, &err), ORR_ERR_ARG);
    snprintf(want, sizeof want, "cannot add frame 2 to '%s': it is 64x32 but the movie's frames "
             "are 32x32 (every frame of a movie has its first frame's size)", mv);
    assert_string_equal(err.msg, want);
    o.width = 32;
    orr_movie_options mo;
    orr_movie_options_default(&mo);
    mo.crf = 30;
    assert_int_equal(orr_frames_render_to(f, s, NULL, mv, &mo, &o, &v, &err), ORR_ERR_ARG);
    snprintf(want, sizeof want, "cannot add frame 2 to '%s': crf 30 differs from the movie's (20, "
             "its first frame's)", mv);
    assert_string_equal(err.msg, want);
    mo.crf = 20;
    mo.fps = 25;
    assert_int_equal(orr_frames_render_to(f, s, NULL, mv, &mo, &o, &v, &err), ORR_ERR_ARG);
    snprintf(want, sizeof want, "cannot add frame 2 to '%s': fps 25 differs from the movie's (30, "
             "its first frame's)", mv);
    assert_string_equal(err.msg, want);
    o.width = 33;
    const char *odd = tmp_path("e/odd.mp4");
    assert_int_equal(orr_frames_render_to(f, s, NULL, odd, NULL, &o, &v, &err), ORR_ERR_ARG);
    snprintf(want, sizeof want, "cannot write '%s': H.264 (4:2:0) needs an even width and height "
             "from 2 to 16384 (got 33x32)", odd);
    assert_string_equal(err.msg, want);
    o.width = 32;
    TU_OK(orr_frames_render_to(f, s, NULL, mv, NULL, &o, &v, &err), &err);
    TU_OK(orr_frames_flush(f, &err), &err);
    decoded d;
    decode(mv, &d);
    assert_int_equal(d.frames, 2);   /* the frames refused are not in it */
    orr_frames_destroy(f);
    /* a movie that cannot be made: its first frame fails, reported by the
     * next render (one worker, one slot: it waits for the frame), which
     * renders nothing; the movie's next frame fails for it */
    TU_OK(orr_frames_create(&f, 1, 1, &err), &err);
    FILE *fp = fopen(tmp_path("plain2"), "w");
    assert_non_null(fp);
    fclose(fp);
    char bad[400], plain[400];
    snprintf(bad, sizeof bad, "%s", tmp_path("plain2/b.mp4"));
    snprintf(plain, sizeof plain, "%s", tmp_path("plain2"));
    TU_OK(orr_frames_render_to(f, s, NULL, bad, NULL, &o, &v, &err), &err);
    assert_int_equal(orr_frames_render_to(f, s, NULL, bad, NULL, &o, &v, &err), ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a directory (a frame written in "
             "the background)", bad, plain);
    assert_string_equal(err.msg, want);
    TU_OK(orr_frames_render_to(f, s, NULL, bad, NULL, &o, &v, &err), &err);
    assert_int_equal(orr_frames_flush(f, &err), ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': frame 2 not added: the movie failed at frame 1 "
             "('%s' is not a directory) (a frame written in the background)", bad, plain);
    assert_string_equal(err.msg, want);
    TU_OK(orr_frames_flush(f, &err), &err);   /* once */
    /* after a flush, the path starts a new movie (which fails again) */
    TU_OK(orr_frames_render_to(f, s, NULL, bad, NULL, &o, &v, &err), &err);
    assert_int_equal(orr_frames_wait(f, &err), ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a directory (a frame written in "
             "the background)", bad, plain);
    assert_string_equal(err.msg, want);
    orr_frames_destroy(f);
    TU_OK(orr_frames_create(&f, 2, 0, &err), &err);
    /* a movie whose finish fails: reported by the flush, after the frames */
    const char *late = tmp_path("e/late.mp4");
    TU_OK(orr_frames_render_to(f, s, NULL, late, NULL, &o, &v, &err), &err);
    TU_OK(orr_frames_wait(f, &err), &err);
    setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
    assert_int_equal(orr_frames_flush(f, &err), ORR_ERR_IO);
    unsetenv("ORRERY_TEST_WRITE_FAIL");
    snprintf(want, sizeof want, "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is "
             "set) (a frame written in the background)", late);
    assert_string_equal(err.msg, want);
    assert_int_equal(access(late, F_OK), -1);
    assert_int_equal(temporaries("e"), 0);
    orr_frames_destroy(f);
    orr_sim_destroy(s);
}

/* ---- the command line's job: a PNG series -------------------------------------- */

static void test_from_pngs(void **state)
{
    (void)state;
    const int w = 96, h = 64;
    uint8_t *rgb = calloc(3 * (size_t)w * (h + 2), 1);   /* room for the frame of another size */
    orr_error err = {0};
    double want[12];
    char name[64];
    for (int k = 1; k <= 11; k++) {   /* a series from 1 */
        picture(rgb, w, h, 2 * k);
        want[k] = luma_of(rgb, w, h);
        snprintf(name, sizeof name, "png/f_%03d.png", k);
        TU_OK(orr_render_write_png(tmp_path(name), w, h, rgb, &err), &err);
    }
    orr_movie_options o;
    orr_movie_options_default(&o);
    o.fps = 5;
    long frames = 0;
    int mw = 0, mh = 0;
    char pattern[600], out[600], pdir[400];
    snprintf(pdir, sizeof pdir, "%s", tmp_path("png"));
    snprintf(pattern, sizeof pattern, "%s/f_%%03d.png", pdir);
    snprintf(out, sizeof out, "%s/out.mp4", pdir);
    TU_OK(orr_movie_from_pngs(out, pattern, -1, &o, &frames, &mw, &mh, &err), &err);
    assert_int_equal(frames, 11);
    assert_int_equal(mw, w);
    assert_int_equal(mh, h);
    decoded d;
    decode(out, &d);
    assert_int_equal(d.frames, 11);
    assert_true(fabs(d.duration - 11 / 5.0) < 1e-9);
    for (int k = 0; k < 11; k++)
        if (fabs(d.luma[k] - want[k + 1]) > 1.0)
            fail_msg("frame %d: mean luminance %.3f, its PNG's %.3f", k, d.luma[k], want[k + 1]);
    /* from a given number */
    TU_OK(orr_movie_from_pngs(out, pattern, 4, &o, &frames, NULL, NULL, &err), &err);
    assert_int_equal(frames, 8);
    decode(out, &d);
    assert_int_equal(d.frames, 8);
    assert_true(fabs(d.luma[0] - want[4]) < 1.0);
    /* errors, naming the file */
    char want_msg[1500], p0[600], p1[600];
    snprintf(pattern, sizeof pattern, "%s/g_%%03d.png", pdir);
    snprintf(p0, sizeof p0, "%s/g_000.png", pdir);
    snprintf(p1, sizeof p1, "%s/g_001.png", pdir);
    assert_int_equal(orr_movie_from_pngs(out, pattern, -1, &o, NULL, NULL, NULL, &err), ORR_ERR_IO);
    snprintf(want_msg, sizeof want_msg, "cannot read '%s': No such file or directory (nor '%s': a "
             "series starts at 0 or 1)", p0, p1);
    assert_string_equal(err.msg, want_msg);
    snprintf(pattern, sizeof pattern, "%s/f_%%03d.png", pdir);
    assert_int_equal(orr_movie_from_pngs(out, pattern, 20, &o, NULL, NULL, NULL, &err), ORR_ERR_IO);
    snprintf(want_msg, sizeof want_msg, "cannot read '%s/f_020.png': No such file or directory",
             pdir);
    assert_string_equal(err.msg, want_msg);
    assert_int_equal(orr_movie_from_pngs(out, "png/f.png", -1, &o, NULL, NULL, NULL, &err),
                     ORR_ERR_ARG);
    assert_string_equal(err.msg, "the frames' pattern 'png/f.png' has no frame number (give one "
                                 "integer conversion, e.g. frames/f_%04d.png)");
    assert_int_equal(orr_movie_from_pngs(out, "png/f_%s.png", -1, &o, NULL, NULL, NULL, &err),
                     ORR_ERR_ARG);
    assert_string_equal(err.msg, "output path 'png/f_%s.png': '%s' is not allowed (use one integer "
                                 "conversion such as %03d, or %% for a literal %)");
    /* a frame of another size in the middle; the old movie stays */
    TU_OK(orr_render_write_png(tmp_path("png/f_006.png"), w, h + 2, rgb, &err), &err);
    assert_int_equal(orr_movie_from_pngs(out, pattern, -1, &o, NULL, NULL, NULL, &err),
                     ORR_ERR_ARG);
    snprintf(want_msg, sizeof want_msg, "'%s/f_006.png' is 96x66 but the first frame "
             "'%s/f_001.png' is 96x64 (every frame of a movie has one size)", pdir, pdir);
    assert_string_equal(err.msg, want_msg);
    decode(out, &d);
    assert_int_equal(d.frames, 8);
    /* not a PNG */
    FILE *fp = fopen(tmp_path("png/f_006.png"), "w");
    assert_non_null(fp);
    fputs("not a picture\n", fp);
    fclose(fp);
    assert_int_equal(orr_movie_from_pngs(out, pattern, -1, &o, NULL, NULL, NULL, &err), ORR_ERR_IO);
    snprintf(want_msg, sizeof want_msg, "cannot read '%s/f_006.png': not a PNG file libpng can "
             "read (", pdir);
    assert_true(strncmp(err.msg, want_msg, strlen(want_msg)) == 0);
    assert_int_equal(temporaries("png"), 0);
    free(rgb);
}

int main(void)
{
    tu_private_cache();
    tu_temp_dir(dir, sizeof dir, "orrery-movie");
    tu_remove_at_exit(dir);
    orr_movie_options o;
    orr_movie_options_default(&o);
    orr_error err = {0};
    if (orr_movie_check("x.mp4", 16, 16, &o, &err)) {   /* no libx264: nothing to test */
        printf("[  SKIPPED ] test_movie: %s\n", err.msg);
        printf("[==========] 0 test(s) run.\n[  PASSED  ] 0 test(s).\n[  SKIPPED ] 1 test(s).\n");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_movie_roundtrip),
        cmocka_unit_test(test_movie_errors),
        cmocka_unit_test(test_frames_movie),
        cmocka_unit_test(test_frames_movie_errors),
        cmocka_unit_test(test_from_pngs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
