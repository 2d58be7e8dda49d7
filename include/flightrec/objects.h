/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file
 * @brief Loaded objects in the stream, for symbol names on the host.
 *
 * A reader can name a code address (FUNCTION_ENTRY's data) only if it knows
 * which file was loaded where.  flightrec_objects_record() records, for
 * every loaded object (the program and its shared objects) not yet
 * recorded, one OBJECT_LOAD record: its load base, its path and, when the
 * object carries one, its GNU build-id (docs/format.md, "Loaded objects").
 *
 * libflightrec-functions (the `-finstrument-functions` hooks) calls it when
 * it is loaded and after every dlopen(); so does the preload library of
 * `flightrec record`.  A program that loads code in other ways (its own
 * loader) may call it after doing so.
 */
#ifndef FLIGHTREC_OBJECTS_H
#define FLIGHTREC_OBJECTS_H

#include "common.h"

FLIGHTREC_BEGIN_DECLS

/**
 * @brief Records the objects loaded since the last call (all of them the
 * first time, and again in a fork child, whose stream is its own).
 *
 * An object is taken as recorded only if OBJECT_LOAD passed the filter
 * while recording ran: objects skipped while recording was stopped are
 * recorded by the next call after it started.  Thread-safe; not
 * async-signal-safe (it takes a lock and walks the loader's list).
 *
 * @return the number of objects recorded by this call
 */
FLIGHTREC_API unsigned flightrec_objects_record(void);

FLIGHTREC_END_DECLS

#endif
