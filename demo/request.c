/*
 * request.c - one worker's HTTP call to the upstream (libcurl, one easy
 * handle per worker, re-used so the connection is kept alive), and the
 * mapping of its result to a breaker outcome.
 */
#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>

#include "demo_api.h"

static size_t discard(char *data, size_t size, size_t n, void *ctx)
{
	(void)data;
	(void)ctx;
	return size * n;
}

/**
 * request_new - an easy handle for GET @url/item with the demo's short
 * timeouts. Returns NULL on allocation failure. Call after fork().
 */
void *request_new(const char *url)
{
	char item[128];
	CURL *h = curl_easy_init();

	if (!h)
		return NULL;
	snprintf(item, sizeof(item), "%s/item", url);
	curl_easy_setopt(h, CURLOPT_URL, item);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, DEMO_CONNECT_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, DEMO_TOTAL_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	return h;
}

/**
 * classify_reply - map an HTTP status (0: none) and a curl result to an
 * outcome: 2xx success; 404 healthy error (a missing item is a correct
 * answer); 429 rate_limited; 503/529 overloaded; other 5xx server_error;
 * other 4xx rejected_request (our fault); curl timeout -> timeout; no
 * connection -> connect. A Retry-After (seconds) is carried along.
 */
void classify_reply(long http_code, int curl_rc, int64_t retry_after_s,
		    struct reply *r)
{
	r->http_code = http_code;
	r->outcome = BRK_FAILURE;
	r->reason = BRK_REASON_NONE;
	r->retry_after_ms = retry_after_s > 0 ? retry_after_s * 1000 : 0;
	if (curl_rc == CURLE_OPERATION_TIMEDOUT)
		r->reason = BRK_REASON_TIMEOUT;
	else if (curl_rc == CURLE_COULDNT_CONNECT)
		r->reason = BRK_REASON_CONNECT;
	else if (curl_rc != CURLE_OK)
		r->reason = BRK_REASON_OTHER;
	else if (http_code >= 200 && http_code < 300)
		r->outcome = BRK_SUCCESS;
	else if (http_code == 404)
		r->outcome = BRK_HEALTHY_ERROR;
	else if (http_code == 429)
		r->reason = BRK_REASON_RATE_LIMITED;
	else if (http_code == 503 || http_code == 529)
		r->reason = BRK_REASON_OVERLOADED;
	else if (http_code >= 500)
		r->reason = BRK_REASON_SERVER_ERROR;
	else if (http_code >= 400)
		r->outcome = BRK_REJECTED_REQUEST;
	else
		r->reason = BRK_REASON_OTHER;
}

/** request_do - make one GET and classify it into @r. */
void request_do(void *req, struct reply *r)
{
	CURL *h = req;
	long code = 0;
	curl_off_t retry_after = 0;
	CURLcode rc = curl_easy_perform(h);

	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
	}
	classify_reply(code, (int)rc, (int64_t)retry_after, r);
}

void request_free(void *req)
{
	if (req)
		curl_easy_cleanup(req);
}
