/*
 * atomics.h - the atomic operations libbreaker uses on shared-memory
 * words: liburcu's uatomic_* and cmm_* barriers (docs/design/segment.md
 * "Atomics"). Every file that touches a shm word gets them from here.
 */
#ifndef BRK_ATOMICS_H
#define BRK_ATOMICS_H

#include <urcu/uatomic.h>
#include <urcu/arch.h>
#include <urcu/system.h>

/* ThreadSanitizer: GCC says __SANITIZE_THREAD__, clang __has_feature. */
#if defined(__SANITIZE_THREAD__)
#define BRK__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRK__TSAN 1
#endif
#endif

#if defined(BRK__TSAN)
/*
 * What TSan checks, and what it cannot (issue 9).
 *
 * The shipped library uses liburcu 0.13 (Debian 12) on x86-64, where
 * uatomic_cmpxchg / xchg / add_return / inc are inline asm (lock cmpxchg,
 * lock xadd, lock inc), uatomic_read / uatomic_set are volatile loads and
 * stores, and cmm_smp_rmb / cmm_smp_wmb are compiler barriers only (x86
 * is TSO). TSan instruments only C-level accesses and __atomic builtins:
 * it cannot see inside inline asm, so it would see every CAS as nothing
 * and every volatile access as a plain racy one. liburcu's own
 * __atomic-based uatomic (CONFIG_RCU_USE_ATOMIC_BUILTINS) exists only
 * from 0.14 on; Debian 12's 0.13.2 has no such option (urcu/config.h).
 *
 * So in TSan builds only, the same operations are spelled with the
 * compiler's builtins, each at least as strong as what liburcu documents:
 * read = acquire load, set = release store, cmpxchg / xchg / add_return
 * = seq_cst, inc = relaxed (liburcu promises no ordering for it), and the
 * smp fences become nothing because the acquire loads and release stores
 * around them already give their order. TSan therefore checks the
 * protocol under release/acquire ordering, a model at least as strong as
 * the shipped one, not the shipped instructions themselves: it cannot
 * find an ordering the shipped code lacks but the builtins supply (a
 * non-volatile access the compiler moves across a volatile one), nor
 * anything between processes (it sees one process's threads only).
 *
 * What covers the difference: every shared fact is one word changed by
 * one CAS (a full barrier on x86 in both spellings), the spin model of
 * the lease and state-word protocol (tests/model: every interleaving,
 * one statement per shm access), and the forked multi-process
 * integration tests (tests/integration), which run the shipped
 * instructions (also under ASan + UBSan).
 */
#undef uatomic_read
#undef uatomic_set
#undef uatomic_cmpxchg
#undef uatomic_add_return
#undef uatomic_inc
#undef uatomic_xchg
#undef uatomic_or
#undef uatomic_and
#undef cmm_smp_wmb
#undef cmm_smp_rmb
#define uatomic_read(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define uatomic_set(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define uatomic_cmpxchg(p, o, n) __sync_val_compare_and_swap((p), (o), (n))
#define uatomic_add_return(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_inc(p) ((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))
/* the lease map's bit set and clear (leasemap.c: each is followed by a
 * full barrier, cmm_smp_mb()) */
#define uatomic_or(p, v) ((void)__atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST))
#define uatomic_and(p, v) ((void)__atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST))
/* TSan does not support fences; see above why none are needed here. */
#define cmm_smp_wmb() do { } while (0)
#define cmm_smp_rmb() do { } while (0)
#endif

#endif /* BRK_ATOMICS_H */
