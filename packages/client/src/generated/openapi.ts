/**
 * Generated from GET /v1/openapi.json by openapi-typescript; do not edit.
 * Regenerate with: npm run generate:client (a test fails while it is out of date).
 */
export type paths = {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List pets
         * @description Pets ordered by id ascending, optionally filtered by status. When more pets exist, a `Link: <...>; rel="next"` header gives the URL of the next page.
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add a pet
         * @description Creates a pet. Send an `Idempotency-Key` to retry safely: the same key and body within 24 hours return the first response again, with `Idempotent-Replayed: true`.
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a pet (deprecated)
         * @deprecated
         * @description Deprecated: removed on Thu, 05 Dec 2030 00:00:00 GMT; from then on it answers 410. Use GET /pets with a status filter instead.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
};
export type webhooks = Record<string, never>;
export type components = {
    schemas: {
        /**
         * @description Availability status.
         * @example available
         * @enum {string}
         */
        PetStatus: "available" | "pending" | "sold";
        /**
         * @description Request body for creating an animal. No status is invented when omitted.
         * @example {
         *       "name": "Rex",
         *       "categoryId": 3,
         *       "status": "available"
         *     }
         */
        NewPet: {
            /**
             * @description The animal's name: 1 to 100 characters (Unicode code points), not blank, no control characters, no unpaired surrogates. Stored as sent.
             * @example Rex
             */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category, 1 to 9223372036854775807; kept exactly.
             * @example 3
             */
            categoryId: number;
            status?: components["schemas"]["PetStatus"];
        };
        /**
         * @description An animal. `status` is absent when it was never set.
         * @example {
         *       "id": 1,
         *       "name": "Rex",
         *       "categoryId": 3,
         *       "status": "available"
         *     }
         */
        Pet: {
            /**
             * Format: int64
             * @description Assigned by the service; at most 2^53-1.
             * @example 1
             */
            id: number;
            /** @description The animal's name. */
            name: string;
            /**
             * Format: int64
             * @description Identifier of the category, 1 to 9223372036854775807; kept exactly.
             * @example 3
             */
            categoryId: number;
            status?: components["schemas"]["PetStatus"];
        };
        /**
         * @example [
         *       {
         *         "id": 1,
         *         "name": "Rex",
         *         "categoryId": 3,
         *         "status": "available"
         *       },
         *       {
         *         "id": 2,
         *         "name": "Mia",
         *         "categoryId": 5
         *       }
         *     ]
         */
        Pets: components["schemas"]["Pet"][];
        /**
         * @example {
         *       "code": "not_found",
         *       "message": "No pet has id 7",
         *       "status": 404
         *     }
         */
        Error: {
            /**
             * @description Machine-readable error code (see the error table).
             * @enum {string}
             */
            code: "bad_request" | "invalid_json" | "invalid_body" | "invalid_parameter" | "unauthorized" | "api_key_expired" | "insufficient_scope" | "not_found" | "key_not_found" | "method_not_allowed" | "request_timeout" | "key_revoked" | "key_changed" | "idempotency_key_in_use" | "gone" | "payload_too_large" | "unsupported_media_type" | "idempotency_key_reused" | "rate_limited" | "api_key_banned" | "headers_too_large" | "internal_error" | "unavailable";
            /** @description What went wrong and what to do about it. */
            message: string;
            /** @description The HTTP status code of the response. */
            status: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
};
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /**
                 * @description Maximum number of animals returned.
                 * @example 2
                 */
                limit?: number;
                status?: components["schemas"]["PetStatus"];
                /** @description Opaque position from the `Link: rel="next"` header of the previous page; bound to the same status filter. */
                cursor?: string;
            };
            header?: {
                /** @description The `ETag` of the answer you hold (or a list of them, or `*`): when it still names the answer, the response is 304 with no body, which counts against your limits like any request. */
                "if-none-match"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of pets. */
            200: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 8288 link to the next page (rel="next"), present only when more pets exist. */
                    Link?: string;
                    /** @description Strong entity tag of this representation, the same on every instance for the same bytes; a compressed answer has its own. Send it back in `If-None-Match` to revalidate. */
                    ETag: string;
                    /** @description `private, no-cache`: keep the answer, but revalidate it before each use. */
                    "Cache-Control": string;
                    /** @description `Accept-Encoding` (with `Origin` first when CORS is on). */
                    Vary: string;
                    /** @description `br` or `gzip`, when the body is 1 KiB or more and `Accept-Encoding` allows it (q-values honoured, `br` preferred); absent for an uncompressed body. */
                    "Content-Encoding"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pets"];
                };
            };
            /** @description Not Modified: `If-None-Match` names the current answer; keep using the one you hold. No body; counts against your limits. */
            304: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Strong entity tag of this representation, the same on every instance for the same bytes; a compressed answer has its own. Send it back in `If-None-Match` to revalidate. */
                    ETag: string;
                    /** @description `private, no-cache`: keep the answer, but revalidate it before each use. */
                    "Cache-Control": string;
                    /** @description `Accept-Encoding` (with `Origin` first when CORS is on). */
                    Vary: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge: `Bearer realm="pets"`, with `error="invalid_token"` when a key was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: The key lacks the scope the operation needs (pets:write). */
            403: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge naming the scope the key lacks: `Bearer realm="pets", error="insufficient_scope", scope="pets:write"`. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. `api_key_banned`: The key kept sending after 429s and is banned for a while. */
            429: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait: until the refusing window resets, or the ban ends. Then back off exponentially with jitter. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: Our fault; retry later. */
            500: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait before retrying. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried create safe: the same key with the same body returns the first response again for 24 hours. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The pet was added; the body carries its id. */
            201: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Path of the new pet. */
                    Location: string;
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge: `Bearer realm="pets"`, with `error="invalid_token"` when a key was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: The key lacks the scope the operation needs (pets:write). */
            403: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge naming the scope the key lacks: `Bearer realm="pets", error="insufficient_scope", scope="pets:write"`. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. `api_key_banned`: The key kept sending after 429s and is banned for a while. */
            429: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait: until the refusing window resets, or the ban ends. Then back off exponentially with jitter. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: Our fault; retry later. */
            500: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait before retrying. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: {
                /** @description The `ETag` of the answer you hold (or a list of them, or `*`): when it still names the answer, the response is 304 with no body, which counts against your limits like any request. */
                "if-none-match"?: string;
            };
            path: {
                /**
                 * @description Identifier of the animal to retrieve.
                 * @example 1
                 */
                petId: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet. */
            200: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 9745: when this operation was deprecated (@<unix seconds>). */
                    Deprecation: string;
                    /** @description RFC 8594: removal date, Thu, 05 Dec 2030 00:00:00 GMT. */
                    Sunset: string;
                    /** @description The replacement: GET /pets with a status filter (rel="successor-version"). */
                    Link?: string;
                    /** @description Strong entity tag of this representation, the same on every instance for the same bytes; a compressed answer has its own. Send it back in `If-None-Match` to revalidate. */
                    ETag: string;
                    /** @description `private, no-cache`: keep the answer, but revalidate it before each use. */
                    "Cache-Control": string;
                    /** @description `Accept-Encoding` (with `Origin` first when CORS is on). */
                    Vary: string;
                    /** @description `br` or `gzip`, when the body is 1 KiB or more and `Accept-Encoding` allows it (q-values honoured, `br` preferred); absent for an uncompressed body. */
                    "Content-Encoding"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description Not Modified: `If-None-Match` names the current answer; keep using the one you hold. No body; counts against your limits. */
            304: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Strong entity tag of this representation, the same on every instance for the same bytes; a compressed answer has its own. Send it back in `If-None-Match` to revalidate. */
                    ETag: string;
                    /** @description `private, no-cache`: keep the answer, but revalidate it before each use. */
                    "Cache-Control": string;
                    /** @description `Accept-Encoding` (with `Origin` first when CORS is on). */
                    Vary: string;
                    /** @description RFC 9745: when this operation was deprecated (@<unix seconds>). */
                    Deprecation: string;
                    /** @description RFC 8594: removal date, Thu, 05 Dec 2030 00:00:00 GMT. */
                    Sunset: string;
                    /** @description The replacement: GET /pets with a status filter (rel="successor-version"). */
                    Link?: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge: `Bearer realm="pets"`, with `error="invalid_token"` when a key was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `insufficient_scope`: The key lacks the scope the operation needs (pets:write). */
            403: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description RFC 6750 challenge naming the scope the key lacks: `Bearer realm="pets", error="insufficient_scope", scope="pets:write"`. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `not_found`: No pet with that id, or no operation at that path. */
            404: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `gone`: getPet after its sunset, 5 December 2030. */
            410: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. `api_key_banned`: The key kept sending after 429s and is banned for a while. */
            429: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait: until the refusing window resets, or the ban ends. Then back off exponentially with jitter. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `internal_error`: Our fault; retry later. */
            500: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
                    /** @description Requests allowed in the window in force (the one with the fewest left). */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window. */
                    "X-RateLimit-Remaining": number;
                    /** @description When that window resets, in Unix seconds. */
                    "X-RateLimit-Reset": number;
                    /** @description Every window of your limits (draft-ietf-httpapi-ratelimit-headers-11), e.g. `"minute";q=60;w=60, "day";q=1000;w=86400`. */
                    "RateLimit-Policy": string;
                    /** @description Requests left (r) and seconds to reset (t) per window, e.g. `"minute";r=59;t=41, "day";r=999;t=43200`. */
                    RateLimit: string;
                    /** @description Whole seconds to wait before retrying. */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
