/*
 * lease.pml - the lease and state-word protocol of libbreaker, in Promela.
 *
 * What is modelled, step for step as lib/src/breaker.c, lease.c and
 * reclaim.c do it (one Promela statement per shared-memory access; an
 * `atomic` only where the C code does one CAS):
 *
 *   - the state word (state, gen) of ONE breaker, changed only by CAS;
 *     every change bumps gen (transition(), brk_reset());
 *   - NP probe slots and MC bulkhead permit slots: owner word claimed by
 *     CAS(owner, seen -> my token), freed by CAS(owner, my token -> 0);
 *     the claim time word `meta`, written after the claim, trusted only
 *     while it carries the current owner's nonce (here: its whole token);
 *   - brk_acquire: open -> half-open race (first caller after the cooling
 *     period CASes the word), try_probe (claim, write meta, re-check the
 *     state word, take a permit), refused-caller reclaim (expired probes of
 *     this generation, then dead owners' leases; rate-limited, so any
 *     refusal may skip it);
 *   - brk_release: free the permit, probe_lost (lease gone, or outlived
 *     probe_timeout_ms -> reclaimed now as failed), generation check,
 *     verdict (success closes, failure re-opens, cancelled counts neither)
 *     counted BEFORE the probe slot is freed;
 *   - breakerd's scan (scan_probes, scan_permits) and the refused caller's
 *     scan: reclaim by CAS(owner, seen dead/expired token -> 0); a reclaimed
 *     probe of the current half-open generation re-opens the breaker;
 *   - brk_reset by an operator: lease epoch + 1, then state := closed,
 *     gen + 1.
 *
 * Time is abstracted: "the cooling period is over" and "this probe is
 * older than probe_timeout_ms" are free nondeterministic choices, so every
 * timing is covered. Workers may die (SIGKILL) between any two steps: the
 * process stops and its pid is marked dead; its leases stay where they
 * are. Death is permanent and pids are not reused (the C code tells a
 * reused pid apart by the start time; that is not modelled).
 *
 * FIXED semantics (what branch `core` implements; the defaults here):
 *   - reset keeps in-flight bulkhead permits counted: a permit slot is
 *     taken while its owner word is non-zero, whatever its epoch; a permit
 *     admitted before the reset frees its slot on release, without a
 *     verdict; the reclaimer frees dead owners' permits of every epoch;
 *   - a probe slot whose token is of an OLDER generation than the one the
 *     claimer saw is free; one of the same or a NEWER generation is taken
 *     (today's lease_claim treats "any other generation" as free: see
 *     BUG_CLAIM_OTHER_GEN below).
 *
 * Properties:
 *   (a) assert at each probe admission: fewer than NP probes of that
 *       generation are admitted with their verdict still pending;
 *   (b) assert at every write of an owner word: the lease it overwrites
 *       is free, ours, of a finished generation (probe claims only), or
 *       the one a reclaimer found dead / expired;
 *   (d) assert at each permit claim: calls holding a permit <= MC, reset
 *       or not;
 *   (c) LTL under weak fairness: once every worker has died or finished,
 *       the breaker is eventually not stuck half-open (no probe slot held
 *       for the current half-open generation) and every permit is freed
 *       (c_probe, c_permit, with breakerd); without breakerd, a late
 *       caller is eventually admitted (c_late, -DNODAEMON).
 *
 * Bug switches (each must make spin report a violation; check.sh):
 *   BUG_RESET_BULKHEAD     today's reset: permits of an older epoch are
 *                          free to claim -> (d)
 *   BUG_FREE_BEFORE_VERDICT probe slot freed before the verdict -> (a)
 *   BUG_CLAIM_OTHER_GEN    today's lease_claim: a probe of ANY other
 *                          generation is free, so a claimer that read the
 *                          state word before two transitions evicts a
 *                          current probe -> (a), (b)
 *   BUG_RECLAIM_STORE      reclaimer frees by plain store, not CAS -> (b)
 *   BUG_ADMIT_UNOWNED      today's try_probe: admitted once the state
 *                          word is unchanged, even if the probe's lease
 *                          was reclaimed (expired) since the claim -> (a)
 *   BUG_RECLAIM_EPOCH      reclaimer frees only current-epoch permits
 *                          (today's scan_permits) with the fixed claim
 *                          rule: a dead pre-reset permit leaks -> (c)
 */

#ifndef NW
#define NW 2        /* workers (pids 1..NW; NW + 1 is the late caller) */
#endif
#ifndef NP
#define NP 1        /* half_open_probes: probe slots in use */
#endif
#ifndef MC
#define MC 1        /* max_concurrent: permit slots in use */
#endif
#ifndef ATTEMPTS
#define ATTEMPTS 1  /* calls per worker ... */
#endif
#ifndef ATTEMPTS1
#define ATTEMPTS1 1 /* ... and worker 1 (2: a deeper, slower run) */
#endif
#ifndef RESETS
#define RESETS 1    /* operator resets (at most) */
#endif
#ifndef COOLS
#define COOLS 2     /* cooling periods that may run out (time passing) */
#endif
#ifndef DEATHS
#define DEATHS 1    /* workers that may be SIGKILLed in one run */
#endif
#ifndef EXPIRES
#define EXPIRES 1   /* probes that may outlive probe_timeout_ms */
#endif

#define CLOSED 0
#define OPEN 1
#define HALF 2

#define SUCC 1
#define FAIL 2
#define CANC 3

/* token = pid:3 | gen-or-epoch tag:6 | serial (unique, as the nonce) */
#define TOK(p, g, s) ((p) + 8 * (g) + 512 * (s))
#define PID(t) ((t) % 8)
#define GEN(t) (((t) / 8) % 64)

byte st = OPEN;        /* the state word: state ... */
byte gen = 0;          /* ... and generation, changed together */
byte epoch = 0;        /* lease epoch, bumped by reset */
int powner[NP];        /* probe slots: owner word */
int pmeta[NP];         /* probe slots: claim time word (writer's token) */
int mowner[MC];        /* permit slots: owner word */
byte ser = 1;          /* token serial (the nonce) */
bool dead[NW + 2];     /* pid was SIGKILLed */
int ptk[NW + 2];       /* admitted probe whose verdict is pending (ghost) */
int hasperm[NW + 2];   /* permit held by a call in flight (ghost) */
byte nquiet = 0;       /* workers that died or finished */
bool late_ok = false;  /* the late caller was admitted (-DNODAEMON) */
byte cools = COOLS;    /* time: cooling periods left to run out */
byte expires = EXPIRES; /* time: probe timeouts left to pass */
byte deaths = DEATHS;  /* SIGKILLs left */

#define quiet (nquiet == NW)

/* ---- the slot rules ------------------------------------------------- */
#ifdef BUG_CLAIM_OTHER_GEN
#define PROBE_TAKEN(o, g) ((o) != 0 && GEN(o) == (g))
#else
#define PROBE_TAKEN(o, g) ((o) != 0 && GEN(o) >= (g))
#endif
#ifdef BUG_RESET_BULKHEAD
#define PERMIT_TAKEN(o, tag) ((o) != 0 && GEN(o) == (tag))
#else
#define PERMIT_TAKEN(o, tag) ((o) != 0)
#endif
#ifdef BUG_RECLAIM_EPOCH
#define PERMIT_SCANNED(o) ((o) != 0 && GEN(o) == epoch)
#else
#define PERMIT_SCANNED(o) ((o) != 0)
#endif

/* (b): overwriting owner word value `cur`: allowed if free, ours, the
 * token a reclaimer found dead/expired (`seen`, `why`), or (probe claims)
 * a token of a finished generation. */
#define FREE_OK(cur, who, seen, why) \
	((cur) == 0 || PID(cur) == (who) || ((cur) == (seen) && (why)))
#define PROBE_CLAIM_OK(cur) ((cur) == 0 || GEN(cur) < gen)

/* Probe verdict accounting (ghost): count pending probes of gen g. */
inline pending_of(g, n, k)
{
	n = 0;
	k = 1;
	do
	:: k <= NW + 1 ->
		if
		:: ptk[k] != 0 && GEN(ptk[k]) == g -> n++
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	k = 0
}

inline perms_held(n, k)
{
	n = 0;
	k = 1;
	do
	:: k <= NW + 1 ->
		if
		:: hasperm[k] != 0 -> n++
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	k = 0
}

/* brk__reclaim_probe: CAS(owner, o -> 0), then a probe of the current
 * half-open generation re-opens the breaker (one CAS on the word).
 * state.c now holds the slot with the reclaimer's own judging token until
 * that transition is done, then frees it (a caller could otherwise claim
 * a probe of the generation the transition is about to end: stale at its
 * release, not a violation of (a)-(d)); this model still frees first: the
 * properties it checks hold either way. */
inline reclaim_probe(s, o, why, who, ok)
{
	atomic {
#ifdef BUG_RECLAIM_STORE
		if
		:: powner[s] != 0 ->
			assert(FREE_OK(powner[s], who, o, why));
			powner[s] = 0;
			ok = true
		:: else -> ok = false
		fi;
#else
		if
		:: powner[s] == o ->
			assert(FREE_OK(powner[s], who, o, why));
			powner[s] = 0;
			ok = true
		:: else -> ok = false
		fi;
#endif
		if
		:: ok && ptk[PID(o)] == o -> ptk[PID(o)] = 0 /* counted failed */
		:: else -> skip
		fi
	};
	if
	:: ok ->
		atomic {
			if
			:: st == HALF && gen == GEN(o) -> st = OPEN; gen++
			:: else -> skip
			fi
		}
	:: else -> skip
	fi
}

/* scan_probes + scan_permits of one record (breakerd, or a refused
 * caller). found: something was reclaimed. */
inline scan(who, i, o, wg, why, ok, found)
{
	atomic { found = false; wg = gen; i = 0 };   /* w, read once */
	do
	:: i < NP ->
		atomic {                          /* owner word, then its owner */
			o = powner[i];
			why = false;
			if
			:: o != 0 && GEN(o) == wg && dead[PID(o)] -> why = true
			:: o != 0 && GEN(o) == wg && !dead[PID(o)] && pmeta[i] == o &&
			   expires > 0 -> expires--; why = true  /* expired */
			:: !(o != 0 && GEN(o) == wg && dead[PID(o)]) -> skip
			fi
		};
		if
		:: why -> reclaim_probe(i, o, why, who, ok)
		:: else -> skip
		fi;
		atomic { found = found || ok; ok = false; i++ }
	:: else -> break
	od;
	i = 0;
	do
	:: i < MC ->
		atomic { o = mowner[i]; why = PERMIT_SCANNED(o) && dead[PID(o)] };
		if
		:: why ->
			atomic {
#ifdef BUG_RECLAIM_STORE
				assert(FREE_OK(mowner[i], who, o, true));
				mowner[i] = 0;
				ok = true;
#else
				if
				:: mowner[i] == o ->
					assert(FREE_OK(mowner[i], who, o, true));
					mowner[i] = 0;
					ok = true
				:: else -> ok = false
				fi;
#endif
				if
				:: ok && hasperm[PID(o)] == o -> hasperm[PID(o)] = 0
				:: else -> skip
				fi;
				found = found || ok
			}
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	atomic { i = 0; o = 0; wg = 0; why = false; ok = false }
}

/* Claim a permit slot (lease_claim over the permit slots). */
inline claim_permit(me, i, o, tag, mtok, mslot, n, k)
{
	tag = epoch;
	i = 0;
	do
	:: i < MC ->
		o = mowner[i];
		if
		:: PERMIT_TAKEN(o, tag) -> i++
		:: else ->
			atomic {
				if
				:: mowner[i] == o ->
					mtok = TOK(me, tag, ser);
					ser++;
					mowner[i] = mtok;
					hasperm[me] = mtok;
					perms_held(n, k);
					assert(n <= MC);              /* (d) */
					assert(o == 0 || dead[PID(o)]) /* (b) */
				:: else -> skip
				fi
			};
			if
			:: mtok != 0 -> mslot = i; break
			:: else -> i++
			fi
		fi
	:: else -> break
	od;
	atomic { i = 0; o = 0; tag = 0; n = 0 }
}

/* take_permit: claim; if the bulkhead is full, a refused caller scans
 * for dead holders (rate-limited: may be skipped) and claims again. */
inline take_permit(me, i, o, tag, mtok, mslot, n, k, wg, why, ok, found)
{
	claim_permit(me, i, o, tag, mtok, mslot, n, k);
	if
	:: mtok == 0 ->
		if
		:: true -> scan(me, i, o, wg, why, ok, found)
		:: !lt -> found = false           /* rate-limited: no scan */
		fi;
		if
		:: found -> claim_permit(me, i, o, tag, mtok, mslot, n, k)
		:: else -> skip
		fi;
		found = false
	:: else -> skip
	fi
}

/* Free our own probe lease: CAS(owner, tok -> 0). */
inline free_probe(s, tok, ok)
{
	atomic {
		if
		:: powner[s] == tok -> powner[s] = 0; ok = true
		:: else -> ok = false
		fi
	}
}

/* SIGKILL may hit here (never the late caller). */
#define DIE if :: skip :: !lt && deaths > 0 -> goto died fi

proctype worker(byte me; bool lt)
{
	byte a, sst, sg, pgen, pslot, mslot, i, tag, n, k, wg, oc;
	int ptok, mtok, o;
	bool stale, ok, why, found;

	if
	:: lt -> quiet   /* the late caller comes once the others are gone */
	:: else -> skip
	fi;
next:
	atomic {
		ptok = 0; mtok = 0; o = 0; stale = false; ok = false; why = false;
		found = false; sst = 0; sg = 0; pgen = 0; pslot = 0; mslot = 0;
		oc = 0
	};
	if
	:: lt && late_ok -> goto done
	:: lt && !late_ok -> skip
	:: !lt && a < (me == 1 -> ATTEMPTS1 : ATTEMPTS) -> a++
	:: !lt && a >= (me == 1 -> ATTEMPTS1 : ATTEMPTS) -> goto done
	fi;
acq:
	atomic { sst = st; sg = gen };
	DIE;
	if
	:: sst == OPEN ->
		if
		:: !lt -> goto refused            /* still cooling */
		:: cools > 0 || lt ->             /* cooled: first caller moves it */
			atomic {
				if
				:: st == sst && gen == sg ->
					st = HALF; gen++;
					if
					:: cools > 0 -> cools--
					:: else -> skip
					fi
				:: else -> skip
				fi
			};
			goto acq
		fi
	:: sst == CLOSED ->
		if
		:: MC > 0 ->
			take_permit(me, i, o, tag, mtok, mslot, n, k, wg, why, ok, found);
			if
			:: mtok == 0 -> goto refused  /* bulkhead full */
			:: else -> skip
			fi
		:: else -> skip
		fi;
		pgen = sg;
		goto call
	:: sst == HALF -> skip
	fi;

	/* try_probe: claim a probe slot for generation sg */
	i = 0;
	do
	:: i < NP ->
		o = powner[i];
		if
		:: PROBE_TAKEN(o, sg) -> i++
		:: else ->
			atomic {
				if
				:: powner[i] == o ->
					assert(PROBE_CLAIM_OK(o));    /* (b) */
					ptok = TOK(me, sg, ser);
					ser++;
					powner[i] = ptok
				:: else -> skip
				fi
			};
			if
			:: ptok != 0 -> pslot = i; break
			:: else -> i++
			fi
		fi
	:: else -> break
	od;
	atomic { i = 0; o = 0 };
	if
	:: ptok == 0 ->
		/* every slot taken: reclaim_expired, then caller reclaim */
		found = false;
		do
		:: i < NP ->
			o = powner[i];
			if
			:: o != 0 && GEN(o) == sg ->
				if
				:: atomic { pmeta[i] == o && expires > 0 ->
					expires--; why = true } /* older than probe_timeout_ms */
					reclaim_probe(i, o, why, me, ok);
					found = found || ok
				:: true -> skip
				fi
			:: else -> skip
			fi;
			i++
		:: else -> break
		od;
		atomic { i = 0; o = 0; why = false };
		if
		:: found -> goto acq
		:: else -> skip
		fi;
		if
		:: true -> scan(me, i, o, wg, why, ok, found)
		:: !lt -> found = false           /* rate-limited: no scan */
		fi;
		if
		:: found -> goto acq
		:: else -> goto refused           /* probes busy */
		fi
	:: else -> skip
	fi;
	DIE;                                  /* KP: probe claimed, no meta */
	pmeta[pslot] = ptok;
	DIE;                                  /* KP: meta written */
	atomic { ok = (st == sst && gen == sg) };
	if
	:: !ok ->                             /* a generation already over */
		free_probe(pslot, ptok, ok);
		ptok = 0;
		goto acq
	:: else -> skip
	fi;
	if
	:: MC > 0 ->
		take_permit(me, i, o, tag, mtok, mslot, n, k, wg, why, ok, found);
		if
		:: mtok == 0 ->
			DIE;                          /* KP: probe held, bulkhead full */
			free_probe(pslot, ptok, ok);
			ptok = 0;
			goto refused
		:: else -> skip
		fi
	:: else -> skip
	fi;
	/* Admission. Today's try_probe admits once the state word is
	 * unchanged; a probe reclaimed as expired between its claim and that
	 * check is admitted without a lease (BUG_ADMIT_UNOWNED). The fix
	 * modelled: the last check before admission is owner == token. */
	atomic {
#ifndef BUG_ADMIT_UNOWNED
		if
		:: powner[pslot] != ptok -> ok = false
		:: else -> ok = true
		fi;
#else
		ok = true;
#endif
		if
		:: ok ->                          /* admitted as a probe: (a) */
			pending_of(sg, n, k);
			assert(n < NP);
			ptk[me] = ptok;
			n = 0
		:: else -> skip
		fi
	};
	if
	:: !ok ->                             /* reclaimed before admission */
		atomic {
			if
			:: mtok != 0 && mowner[mslot] == mtok -> mowner[mslot] = 0
			:: else -> skip
			fi;
			hasperm[me] = 0
		};
		ptok = 0; mtok = 0;
		goto acq
	:: else -> skip
	fi;
	pgen = sg;

call:
	DIE;                                  /* KP: admitted, call running */
	if
	:: oc = SUCC
	:: oc = FAIL
	:: oc = CANC
	fi;
	/* brk_release */
	if
	:: mtok != 0 ->
		atomic {
			if
			:: mowner[mslot] == mtok -> mowner[mslot] = 0
			:: else -> stale = true
			fi;
			hasperm[me] = 0
		};
		DIE                               /* KP: permit freed */
	:: else -> skip
	fi;
	if
	:: ptok != 0 ->                       /* probe_lost */
		if
		:: powner[pslot] != ptok -> stale = true
		:: else ->
			if
			:: atomic { pmeta[pslot] == ptok && expires > 0 ->
				expires--; why = true } /* outlived probe_timeout_ms */
				reclaim_probe(pslot, ptok, why, me, ok);
				stale = true;
				why = false
			:: true -> skip
			fi
		fi
	:: else -> skip
	fi;
	atomic { sst = st; sg = gen };
	if
	:: stale || sg != pgen ->             /* not counted */
		if
		:: ptok != 0 -> free_probe(pslot, ptok, ok)
		:: else -> skip
		fi;
		atomic {
			if
			:: ptk[me] != 0 -> ptk[me] = 0
			:: else -> skip
			fi
		};
		goto rel_done
	:: else -> skip
	fi;
#ifdef BUG_FREE_BEFORE_VERDICT
	if
	:: ptok != 0 -> free_probe(pslot, ptok, ok)
	:: else -> skip
	fi;
#endif
	DIE;                                  /* KP: before the verdict */
	atomic {                              /* verdict: one CAS on the word */
		if
		:: st == sst && gen == sg ->
			if
			:: ptok != 0 && sst == HALF && oc == SUCC -> st = CLOSED; gen++
			:: ptok != 0 && sst == HALF && oc == FAIL -> st = OPEN; gen++
			:: ptok == 0 && sst == CLOSED && oc == FAIL -> st = OPEN; gen++
			:: else -> skip
			fi
		:: else -> skip
		fi;
		if
		:: ptk[me] != 0 -> ptk[me] = 0
		:: else -> skip
		fi
	};
	DIE;                                  /* KP: verdict in, slot held */
#ifndef BUG_FREE_BEFORE_VERDICT
	if
	:: ptok != 0 -> free_probe(pslot, ptok, ok)
	:: else -> skip
	fi;
#endif
rel_done:
	if
	:: lt -> late_ok = true
	:: else -> skip
	fi;
refused:
	goto next;

died:
	atomic {
		deaths--;
		dead[me] = true;
		nquiet++;
		a = 0; sst = 0; sg = 0; pgen = 0; pslot = 0; mslot = 0; i = 0;
		tag = 0; n = 0; k = 0; wg = 0; oc = 0; ptok = 0; mtok = 0; o = 0;
		stale = false; ok = false; why = false; found = false
	};
	goto end_w;
done:
	atomic {
		if
		:: !lt -> nquiet++
		:: else -> skip
		fi;
		a = 0
	};
end_w:
	skip
}

#ifndef NODAEMON
proctype daemon()
{
	byte i, wg;
	int o;
	bool why, ok, found;

	/* One scan is one atomic step here (a coarsening that keeps the state
	 * count small); the same scan code runs fully interleaved in the
	 * refused callers, so the check-then-CAS race is still explored. */
end_scan:
	do
	:: atomic { scan(0, i, o, wg, why, ok, found); found = false }
	od
}
#endif

proctype operator()
{
	byte r;

	do
	:: r < RESETS ->
		r++;
		epoch++;                          /* every permit's epoch is over */
		atomic { st = CLOSED; gen++ }     /* the CAS loop's winning CAS */
	:: break
	od
}

init
{
	byte p;

	atomic {
		p = 1;
		do
		:: p <= NW -> run worker(p, false); p++
		:: else -> break
		od;
#ifdef NODAEMON
		run worker(NW + 1, true);
#else
		run daemon();
#endif
		run operator();
		p = 0
	}
}

#if NP == 1
#define stuck (st == HALF && powner[0] != 0 && GEN(powner[0]) == gen)
#else
#define stuck (st == HALF && powner[0] != 0 && GEN(powner[0]) == gen && \
	       powner[1] != 0 && GEN(powner[1]) == gen)
#endif
#if MC == 1
#define nopermit (mowner[0] == 0)
#else
#define nopermit (mowner[0] == 0 && mowner[1] == 0)
#endif

#ifdef LIVE
#ifdef NODAEMON
ltl c_late { [] (quiet -> <> late_ok) }
#else
ltl c_probe { [] (quiet -> <> !stuck) }
ltl c_permit { [] (quiet -> <> nopermit) }
#endif
#endif
