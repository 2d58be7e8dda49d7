/* SPDX-License-Identifier: BSD-2-Clause */
#define _POSIX_C_SOURCE 200809L
#include "convert-model-sink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int ms_begin(struct fr_sink *base)
{
    struct fr_model_sink *s = (struct fr_model_sink *)base;
    if (fr_model_init(&s->model, s->format->model, s, base->src,
                      base->kernel) != 0) {
        fr_errorf(base->error, sizeof base->error, "out of memory");
        return -1;
    }
    s->model_ready = 1;
    return s->format->begin(s);
}

static int ms_record(struct fr_sink *base, const struct flightrec_record *r)
{
    struct fr_model_sink *s = (struct fr_model_sink *)base;
    if (fr_model_record(&s->model, r) != 0) {
        /* Keep the first error if a format already said more. */
        if (base->error[0] == '\0')
            fr_errorf(base->error, sizeof base->error, "writing: %s",
                      s->out->failed ? strerror(s->out->err)
                                     : "out of memory");
        return -1;
    }
    return 0;
}

static int ms_end(struct fr_sink *base)
{
    struct fr_model_sink *s = (struct fr_model_sink *)base;
    int finished = s->model_ready ? fr_model_finish(&s->model) : 0;
    if (s->format->trailer != NULL)
        s->format->trailer(s);
    if (finished != 0 && base->error[0] == '\0')
        fr_errorf(base->error, sizeof base->error, "writing: %s",
                  s->out->failed ? strerror(s->out->err) : "out of memory");
    int rc = fr_out_close(s->out);
    s->out = NULL;
    if (rc != 0) {
        fr_errorf(base->error, sizeof base->error, "writing: %s",
                  strerror(errno));
        return -1;
    }
    return finished != 0 ? -1 : 0;
}

static void ms_destroy(struct fr_sink *base)
{
    struct fr_model_sink *s = (struct fr_model_sink *)base;
    if (s->format->destroy != NULL)
        s->format->destroy(s);
    if (s->model_ready)
        fr_model_free(&s->model);
    /* Still open: the conversion failed; leave nothing behind. */
    fr_out_discard(s->out);
    free(s);
}

static const struct fr_sink_ops ms_ops = {
    ms_begin, ms_record, ms_end, ms_destroy, NULL
};

int fr_model_sink_create(struct fr_sink **out, size_t size,
                         const struct fr_model_sink_format *format,
                         const char *path, char *err, size_t err_size)
{
    struct fr_model_sink *s = calloc(1, size);
    if (s == NULL) {
        fr_errorf(err, err_size, "out of memory");
        return -1;
    }
    s->out = fr_out_open(path);
    if (s->out == NULL) {
        fr_errorf(err, err_size, "cannot create %s: %s", path,
                  strerror(errno));
        free(s);
        return -1;
    }
    s->format = format;
    s->base.ops = &ms_ops;
    *out = &s->base;
    return 0;
}
