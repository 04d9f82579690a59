/* number.h - the one strict number syntax of every migsched input.
 *
 * Every reader (traces, schedules, the Alibaba lists, JSON numbers handed
 * over as text) and every command-line option parses numbers here, so that
 * "0x10", " 5", "inf", "nan" or "5 " mean the same thing everywhere: not a
 * number. Accepted: an optional sign, decimal digits with an optional
 * fraction, an optional decimal exponent ("1", "-2.5", "1e-320", "+3E4").
 * A value too small for a double rounds towards zero (1e-320 is a number);
 * one too large is MS_ERANGE, never infinity.
 */
#ifndef MIGSCHED_NUMBER_H
#define MIGSCHED_NUMBER_H

#include <stdint.h>

#include "migsched/status.h"

/* s as a finite double: MS_OK, MS_EPARSE (not a decimal number, NULL or
 * empty), MS_ERANGE (its magnitude exceeds DBL_MAX). */
ms_status_t ms_number_double(const char *s, double *out);

/* s as a decimal integer (optional sign, digits only) in [lo, hi]:
 * MS_OK, MS_EPARSE (not an integer), MS_ERANGE (outside [lo, hi]). */
ms_status_t ms_number_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* s as a decimal integer in [0, hi] (seeds: up to UINT64_MAX): MS_OK,
 * MS_EPARSE (not an integer), MS_ERANGE (negative, or above hi). */
ms_status_t ms_number_uint(const char *s, uint64_t hi, uint64_t *out);

/* Whether a double lies in [lo, hi] and converts to int64_t without
 * undefined behaviour: the guard every float-to-integer cast of input
 * goes through. NaN is never in range. */
int ms_number_fits_int(double v, int64_t lo, int64_t hi);

#endif
