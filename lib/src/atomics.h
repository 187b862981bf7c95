/*
 * atomics.h - the atomic operations libbreaker uses on shared-memory
 * words: liburcu's uatomic_* and cmm_* barriers (docs/design.md
 * "Atomics"). Every file that touches a shm word gets them from here.
 */
#ifndef BRK_ATOMICS_H
#define BRK_ATOMICS_H

#include <urcu/uatomic.h>
#include <urcu/arch.h>
#include <urcu/system.h>

#if defined(__SANITIZE_THREAD__)
/*
 * ThreadSanitizer cannot see liburcu's inline-asm atomics (lock cmpxchg)
 * and would report every volatile uatomic_read/uatomic_set as a race. In
 * TSan builds only, the same operations are spelled with the compiler's
 * __atomic builtins, with at least the ordering liburcu documents.
 */
#undef uatomic_read
#undef uatomic_set
#undef uatomic_cmpxchg
#undef uatomic_add_return
#undef uatomic_inc
#undef uatomic_xchg
#undef cmm_smp_wmb
#undef cmm_smp_rmb
#define uatomic_read(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define uatomic_set(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define uatomic_cmpxchg(p, o, n) __sync_val_compare_and_swap((p), (o), (n))
#define uatomic_add_return(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define uatomic_inc(p) ((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))
/* Fences are not supported under TSan; every access above is already an
 * acquire load or release store, which gives the ordering they provide. */
#define cmm_smp_wmb() do { } while (0)
#define cmm_smp_rmb() do { } while (0)
#endif

#endif /* BRK_ATOMICS_H */
