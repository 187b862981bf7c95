/*
 * abi.h - reading and writing caller structs whose size may differ from
 * the library's (breaker.h, "Growing structs"). Private to lib/src.
 */
#ifndef BRK_ABI_H
#define BRK_ABI_H

#include <stddef.h>

#include "breaker.h"

/*
 * brk__struct_in - copy_struct_from_user() for a caller's input struct.
 * @dst/@ksize: the library's struct, already filled with the defaults.
 * @src/@usize: the caller's struct and the size it declares.
 * Copies the first min(@usize, @ksize) bytes of @src over @dst; bytes of
 * @src past @ksize must be zero. Returns 0, -EINVAL (@usize not a
 * multiple of 8, below 8 or above BRK_STRUCT_SIZE_MAX), -E2BIG (a
 * non-zero byte past @ksize).
 */
int brk__struct_in(void *dst, size_t ksize, const void *src, size_t usize);

/*
 * brk__struct_out - copy the library's @src (@ksize bytes) into the
 * caller's @dst of @usize bytes: the first min(@usize, @ksize) bytes,
 * then zeros up to @usize. Writes exactly @usize bytes.
 */
void brk__struct_out(void *dst, size_t usize, const void *src, size_t ksize);

/* @user normalised to this library's struct brk_config (size set to
 * sizeof): defaults for what the caller lacks. NULL: the defaults.
 * Returns 0, -EINVAL, -E2BIG as brk__struct_in(). */
int brk__config_in(const struct brk_config *user, struct brk_config *out);

/* Fill the settings of @c with the defaults (not c->size). */
void brk__config_defaults(struct brk_config *c);

/* Likewise for struct brk_attach_opts. */
int brk__attach_opts_in(const struct brk_attach_opts *user,
			struct brk_attach_opts *out);

/* The full-size fillers behind the _sz functions (write sizeof(*out)). */
int brk__segment_info(brk_segment *seg, struct brk_segment_info *out);
int brk__breaker_info(brk_breaker *b, struct brk_info *out);
int brk__info_at(brk_segment *seg, uint32_t idx, struct brk_info *out);
int brk__bucket_info(brk_bucket *k, struct brk_bucket_info *out);
int brk__budget_info(brk_budget *g, struct brk_budget_info *out);

#endif /* BRK_ABI_H */
