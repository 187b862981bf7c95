/*
 * lmap.pml - the lease map's mark / unmark protocol (lib/src/leasemap.c,
 * lease.c, reclaim.c; docs/design/lifecycle.md "Lease registry"), in Promela.
 *
 * Two records share one level-0 word (bits l0[0], l0[1]) and so one
 * level-1 bit (l1). NC claimers (2), each on a record chosen freely (they
 * may share one, on different slots), and one scanner making PASSES
 * passes. One Promela statement per shared-memory access; Promela's
 * interleaving is sequentially consistent, which is what the full
 * barriers of the C code (the CAS, cmm_smp_mb() after each OR and AND)
 * give for the store-then-load pairs that matter.
 *
 * Claimer (brk__lease_claim): mark (load l0 bit, OR if clear; load l1,
 * OR if clear — the fast path checks both), claim its slot (CAS), mark
 * again, then maybe release (releases never touch the map). It may die
 * between any two of its steps.
 * Scanner (walk_marked, visit, brk__lmap_settle): load l1; if set, load
 * the level-0 word once; for each bit of that snapshot: load the slots,
 * if none is held clear the bit, load the slots again, set it again if
 * one is held; then if the word is 0: clear l1, load the word again, set
 * l1 again if it is non-zero.
 *
 * Property (checked when every process has stopped): a lease that is
 * held, and whose claimer got past its re-mark, has its level-0 bit and
 * the level-1 bit set. A claimer killed between its claim and its re-mark
 * is exempt: that window is the backstop sweep's (reclaim.c).
 *
 * STRICT asserts it for every held lease and must fail: the window is
 * real (the reason for the sweep), not an artefact of the argument.
 * Bug variants (each must fail): NO_REMARK (no mark after the claim),
 * NO_RECHECK (the scanner does not re-scan after clearing), NO_L1_RECHECK
 * (level 1 cleared without reading the word again), FAST_L0_ONLY (the
 * fast path checks level 0 only: a claimer that died between its two ORs
 * would hide a record from the walk).
 *
 * Run: tests/model/check_lmap.sh
 */
#ifndef PASSES
#define PASSES 2
#endif
#ifndef NC
#define NC 2 /* claimers (3: 50 M states, 2.6 GB, 90 s; 2 covers every
		pair: same record, or the other record of the word) */
#endif

bit l0[2];
bit l1;
bit slot[6];   /* slot[2 * record + k]: claimer k's slot (0..2), per record */
byte rec[NC];
bit marked_after[NC]; /* got past its re-mark */
bit holds[NC];        /* holds its lease now */
byte running = NC + 1;


inline mark(r) {
#ifdef FAST_L0_ONLY
	if
	:: l0[r] == 1 -> skip
	:: else ->
		if :: l0[r] == 0 -> l0[r] = 1 :: else -> skip fi;
		if :: l1 == 0 -> l1 = 1 :: else -> skip fi
	fi
#else
	if :: l0[r] == 0 -> l0[r] = 1 :: else -> skip fi;
	if :: l1 == 0 -> l1 = 1 :: else -> skip fi
#endif
}

/* one of the statements a claimer may die at */
#define MAYDIE if :: true -> goto stop :: true -> skip fi

proctype claimer(byte k)
{
	byte r;
	if :: r = 0 :: r = 1 fi;
	rec[k] = r;
	MAYDIE;
	/* mark(r), with a death point between the two ORs (the fast path,
	 * both bits set: no store, is the same as the two loads below) */
#ifdef FAST_L0_ONLY
	if :: l0[r] == 1 -> goto premarked :: else -> skip fi;
#endif
	if :: l0[r] == 0 -> l0[r] = 1 :: else -> skip fi;
	MAYDIE; /* between its two ORs */
	if :: l1 == 0 -> l1 = 1 :: else -> skip fi;
premarked:
	MAYDIE;
	slot[2 * k + r] = 1; /* the CAS (its slot is free: one claimer each) */
	holds[k] = 1;
	MAYDIE; /* the window the sweep covers */
#ifndef NO_REMARK
	mark(r);
#endif
	marked_after[k] = 1;
	if
	:: true -> slot[2 * k + r] = 0; holds[k] = 0
	:: true -> skip
	fi;
stop:
	running--
}

/* the scan's "held" test of record r: one load per slot */
inline held(r, h) {
	h = 0;
	if :: slot[0 + r] == 1 -> h = 1 :: else -> skip fi;
	if :: slot[2 + r] == 1 -> h = 1 :: else -> skip fi;
#if NC > 2
	if :: slot[4 + r] == 1 -> h = 1 :: else -> skip fi
#endif
}

proctype scanner()
{
	byte pass = 0, r;
	bit m0[2], h;

	do
	:: pass == PASSES -> break
	:: else ->
		pass++;
		if
		:: l1 == 1 ->
			atomic { m0[0] = l0[0]; m0[1] = l0[1] } /* one load of the word */
			r = 0;
			do
			:: r == 2 -> break
			:: else ->
				if
				:: m0[r] == 1 ->
					held(r, h);
					if
					:: h == 0 ->
						l0[r] = 0; /* AND, then a full barrier */
#ifndef NO_RECHECK
						held(r, h);
						if :: h == 1 -> l0[r] = 1 :: else -> skip fi
#endif
					:: else -> skip
					fi
				:: else -> skip
				fi;
				r++
			od;
			if
			:: (l0[0] == 0 && l0[1] == 0) -> /* one load of the word */
				l1 = 0;
#ifndef NO_L1_RECHECK
				if
				:: (l0[0] == 1 || l0[1] == 1) -> l1 = 1
				:: else -> skip
				fi
#endif
			:: else -> skip
			fi
		:: else -> skip
		fi
	od;
	running--
}

init
{
	atomic {
		byte c = 0;
		do
		:: c == NC -> break
		:: else -> run claimer(c); c++
		od;
		run scanner()
	}
	running == 0;
	byte k = 0;
	do
	:: k == NC -> break
	:: else ->
#ifdef STRICT
		assert(!holds[k] || (l0[rec[k]] == 1 && l1 == 1));
#else
		assert(!(holds[k] && marked_after[k]) || (l0[rec[k]] == 1 && l1 == 1));
#endif
		k++
	od
}
