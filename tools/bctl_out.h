/*
 * bctl_out.h - what bctl prints: JSON objects (bctl_json.c) and the human
 * forms (bctl_print.c) of breakers, the segment header and events.
 *
 * Everything read from the segment is untrusted: names are copied with
 * bctl_safe_name() (bounded, printable ASCII only) before being printed.
 */
#ifndef BCTL_OUT_H
#define BCTL_OUT_H

#include <stdio.h>

#include <jansson.h>

#include "breaker.h"
#include "record_out.h" /* bctl_safe_name, bctl_daemon_state */


/* The record-kind words are the library's brk_kind_name(); the old name
 * stays for code written against it. */
#define bctl_kind_name brk_kind_name

/* bctl_json.c: new references, NULL on allocation failure. */
json_t *bctl_json_breaker(const struct brk_info *in);
json_t *bctl_json_segment(const struct brk_segment_info *s);
json_t *bctl_json_event(const struct brk_event *e);
/** bctl_json_put - print @j on stdout and a newline, drop the reference.
 * Returns 0 or -1 (NULL @j or a write error). */
int bctl_json_put(json_t *j, int compact);

/* bctl_print.c */
#define BCTL_KEY_WIDTH 26  /* inspect: "key:" padded to this column */
#define BCTL_NAME_WIDTH 24 /* list: the NAME column */
/** bctl_kv - one inspect line: @key indented by @indent, ':', padding to
 * BCTL_KEY_WIDTH, then the printf-formatted value and a newline. */
void bctl_kv(FILE *f, int indent, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void bctl_print_breaker(FILE *f, const struct brk_info *in);
void bctl_print_segment(FILE *f, const struct brk_segment_info *s);
/* The list's header: the breakers' columns, or for @kind (enum brk_kind;
 * 0: any) another kind only, NAME KIND DETAIL. */
void bctl_print_list_header(FILE *f, int kind);
void bctl_print_list_row(FILE *f, const struct brk_info *in);
void bctl_print_event(FILE *f, const struct brk_event *e);
/* The host id of a remote event's origin, safe to print ("?" if the
 * slot was reused); call only when e->origin[0]. */
void bctl_event_origin(const struct brk_event *e, char host[BRK_HOST_ID_MAX + 1]);

/* bctl_limits_out.c: buckets and retry budgets (kind "bucket", "budget");
 * the *_record functions dispatch on in->kind, breakers included. */
json_t *bctl_json_bucket(const struct brk_info *in);
json_t *bctl_json_budget(const struct brk_info *in);
json_t *bctl_json_record(const struct brk_info *in);
void bctl_print_bucket(FILE *f, const struct brk_info *in);
void bctl_print_budget(FILE *f, const struct brk_info *in);
void bctl_print_record(FILE *f, const struct brk_info *in);
void bctl_print_record_row(FILE *f, const struct brk_info *in);

/* bctl_fleet_out.c: the fleet link's status (brk_fleet_status()) as the
 * "fleet link:" block, and as a JSON object ({"state": "off"} without a
 * link; {"state": null, "error": ...} if unreadable). */
void bctl_print_fleet(FILE *f, brk_segment *seg);
json_t *bctl_json_fleet(brk_segment *seg);

#endif /* BCTL_OUT_H */
