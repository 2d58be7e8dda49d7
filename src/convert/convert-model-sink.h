/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sink shared by the timeline formats (Perfetto, Chrome JSON, ftrace):
 * an output file fed by the timeline model.  A format embeds struct
 * fr_model_sink first and supplies only what differs: its model callbacks,
 * the header written at begin and the trailer written at end.
 */
#ifndef FLIGHTREC_CONVERT_MODEL_SINK_H
#define FLIGHTREC_CONVERT_MODEL_SINK_H

#include <stddef.h>

#include "convert-model.h"
#include "util/out-buffer.h"
#include "convert.h"

struct fr_model_sink;

struct fr_model_sink_format {
    /* Called with the sink as the writer argument. */
    const struct fr_model_ops *model;
    /* After the model is ready: writes the header.  Returns 0 or -1. */
    int (*begin)(struct fr_model_sink *s);
    /* Before the output is closed; NULL when the format has none. */
    void (*trailer)(struct fr_model_sink *s);
    /* Frees what the format holds, whether the conversion ended or
     * failed; NULL when it holds nothing. */
    void (*destroy)(struct fr_model_sink *s);
};

struct fr_model_sink {
    struct fr_sink base;
    const struct fr_model_sink_format *format;
    struct fr_out *out;
    struct fr_model model;
    int model_ready;
};

/* Allocates @a size bytes (zeroed; a struct starting with fr_model_sink)
 * and opens @a path.  Returns 0 or -1 with a message in @a err. */
int fr_model_sink_create(struct fr_sink **out, size_t size,
                         const struct fr_model_sink_format *format,
                         const char *path, char *err, size_t err_size);

/* What model callbacks return: -1 once a write has failed. */
static inline int fr_model_sink_status(const struct fr_model_sink *s)
{
    return s->out->failed ? -1 : 0;
}

#endif
