/*
 * fleet.c - CONTRACT STUB (branch fleet-contract): the fleet-link entry
 * points of breaker.h return -ENOSYS until the fleetlib part replaces
 * this file. Must not reach main.
 */
#include <errno.h>
#include "breaker.h"

int brk_host_id_validate(const char *id) { (void)id; return -ENOSYS; }
int brk_set_origin(brk_segment *seg, const char *host_id) { (void)seg; (void)host_id; return -ENOSYS; }
int brk_trip_extend(brk_breaker *b, uint64_t for_ms) { (void)b; (void)for_ms; return -ENOSYS; }
int brk_cool_for(brk_breaker *b, uint64_t ms) { (void)b; (void)ms; return -ENOSYS; }
int brk_pace_cut(brk_bucket *k, uint64_t rate_milli) { (void)k; (void)rate_milli; return -ENOSYS; }
int brk_fleet_report_sz(brk_segment *seg, const struct brk_fleet_status *st, size_t size)
{ (void)seg; (void)st; (void)size; return -ENOSYS; }
int brk_fleet_status_sz(brk_segment *seg, struct brk_fleet_status *out, size_t size)
{ (void)seg; (void)out; (void)size; return -ENOSYS; }
const char *brk_fleet_state_name(int state) { (void)state; return "off"; }
const char *brk_fleet_drop_name(int cause) { (void)cause; return "unknown_cause"; }
