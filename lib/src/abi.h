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

#endif /* BRK_ABI_H */
