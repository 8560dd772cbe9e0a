/**
 * Generated from GET /admin/v1/openapi.json by openapi-typescript; do not edit.
 * Regenerate with: npm run generate:console (a test fails while it is out of date).
 */
export type paths = {
    "/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List API keys
         * @description A page of keys in the shape of `petstore keys list --json`, never a secret: oldest first unless `sort` and `order` say otherwise, filtered by `state`, `plan` and `label`. When more keys follow, a `Link: <...>; rel="next"` header gives the URL of the next page.
         */
        get: operations["listKeys"];
        put?: never;
        /**
         * Create an API key
         * @description Issues a key; its secret is in this response only. Send an `Idempotency-Key` to retry safely: the same key and body within 24 hours return the first response again (the same secret), with `Idempotent-Replayed: true`.
         */
        post: operations["createKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an API key */
        get: operations["getKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/plan": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Change a key's plan
         * @description Same key, same secret. Requests already counted in the current minute and day stay counted; in force on every instance within 1 s with Redis, 5 s without.
         */
        put: operations["setKeyPlan"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/scopes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Change a key's scopes
         * @description Same key, same secret. A request the key may no longer make gets 403 insufficient_scope (and still counts against its limits); in force on every instance within 1 s with Redis, 5 s without.
         */
        put: operations["setKeyScopes"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/expiry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Set or remove a key's expiry */
        put: operations["setKeyExpiry"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/roll": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Give a key a new secret
         * @description Same key record (id, plan, counters, ban). The new secret is in this response only; the previous one keeps working for `graceSeconds` (default 86400). Accepts `Idempotency-Key` as createKey does.
         */
        post: operations["rollKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Revoke a key for good; every instance refuses it within 5 s
         * @description Accepts `Idempotency-Key` as createKey does.
         */
        post: operations["revokeKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/unban": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Lift a key's ban early
         * @description Accepts `Idempotency-Key` as createKey does.
         */
        post: operations["unbanKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/keys/{keyId}/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A key's requests per UTC day */
        get: operations["getKeyUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The audit trail of key changes
         * @description Every change to a key, oldest first (newest first with `order=desc`): when, what (old and new values), who. Never a secret.
         */
        get: operations["listAudit"];
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
         * @description An API key as operators see it; never its secret.
         * @example {
         *       "id": "key_8Fq2LkA0pQe7ZcX1",
         *       "name": "acme-prod",
         *       "plan": "pro",
         *       "limits": {
         *         "perMinute": 300,
         *         "perDay": 10000
         *       },
         *       "scopes": [
         *         "pets:read",
         *         "pets:write"
         *       ],
         *       "prefix": "pa_live_4kP2",
         *       "state": "active",
         *       "createdAt": "2026-11-24T10:00:00.000Z",
         *       "lastUsedAt": null,
         *       "expiresAt": null,
         *       "revokedAt": null,
         *       "bannedUntil": null,
         *       "previousSecretExpiresAt": null,
         *       "deprecatedCalls": 0
         *     }
         */
        Key: {
            /** @description The key id, e.g. key_ and 16 letters and digits. */
            id: string;
            /** @description The label given at creation. */
            name: string;
            /** @description The plan; enterprise limits are agreed per key. */
            plan: "free" | "pro" | "business" | "enterprise";
            /** @description The limits in force. */
            limits: {
                perMinute: number;
                perDay: number;
            };
            /** @description What the key may do: pets:read (listPets, getPet), pets:write (createPet). Any other operation gets 403 insufficient_scope. */
            scopes: ("pets:read" | "pets:write")[];
            /** @description The first 12 characters of the secret; never the secret. */
            prefix: string;
            /** @description What a request with the key gets now. */
            state: "active" | "revoked" | "expired" | "banned";
            /** Format: date-time */
            createdAt: string;
            /** @description Coarse: updated at most once a minute. */
            lastUsedAt: string | null;
            /** @description From then on the key is refused with 401 api_key_expired. */
            expiresAt: string | null;
            /** @description When the key was revoked. */
            revokedAt: string | null;
            /** @description End of the ban in force. */
            bannedUntil: string | null;
            /** @description After a roll: when the previous secret stops working. */
            previousSecretExpiresAt: string | null;
            /** @description Calls to deprecated operations so far. */
            deprecatedCalls: number;
        };
        Keys: components["schemas"]["Key"][];
        /** @description A key with its secret, after a create or a roll. */
        NewKey: {
            key: components["schemas"]["Key"];
            /** @description The secret: shown in this response only, never again. */
            secret: string;
        };
        /** @description Requests per UTC day, admitted and refused. */
        Usage: {
            /** @description YYYY-MM-DD, UTC. */
            day: string;
            admitted: number;
            refused: number;
        }[];
        /** @description Changes to keys, oldest first; never a secret. */
        Audit: {
            id: string;
            /** Format: date-time */
            at: string;
            keyId: string;
            action: "create" | "set_plan" | "set_scopes" | "set_expiry" | "roll" | "revoke" | "unban" | "ban" | "ban_end";
            changes: {
                [key: string]: {
                    from: unknown;
                    to: unknown;
                };
            };
            actor: {
                /** @enum {string} */
                kind: "cli";
                user: string;
                host: string;
            } | {
                /** @enum {string} */
                kind: "admin_token";
                id: string;
            } | {
                /** @enum {string} */
                kind: "system";
            };
        }[];
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
    listKeys: {
        parameters: {
            query?: {
                /** @description Keys per page. */
                limit?: number;
                /** @description Opaque position from the `Link: rel="next"` header of the previous page; bound to the same filter and order. */
                cursor?: string;
                /** @description Only keys in this state now. */
                state?: "active" | "expired" | "revoked" | "banned";
                /** @description Only keys on this plan. */
                plan?: "free" | "pro" | "business" | "enterprise";
                /** @description Only keys whose label contains this text (letters in any case). */
                label?: string;
                /** @description `created` (the default), `label` or `lastUsed` (never used counts as oldest). */
                sort?: "created" | "label" | "lastUsed";
                /** @description `asc` (the default) or `desc`. */
                order?: "asc" | "desc";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The keys. */
            200: {
                headers: {
                    /** @description RFC 8288 link to the next page (rel="next"), present only when more keys follow. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Keys"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    createKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "plan": "pro",
                 *       "name": "acme-prod"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description free, pro, business, or enterprise (with perMinute and perDay).
                     * @enum {string}
                     */
                    plan: "free" | "pro" | "business" | "enterprise";
                    /** @description Enterprise only, and then required: requests per minute. */
                    perMinute?: number;
                    /** @description Enterprise only, and then required: requests per day. */
                    perDay?: number;
                    /** @description A label for people. */
                    name?: string;
                    /** @description RFC 3339; the key stops working then. */
                    expiresAt?: string;
                    /**
                     * @description What the key may do, a comma list: `pets:read`, `pets:write`; both when absent.
                     * @example pets:read,pets:write
                     */
                    scopes?: string;
                };
            };
        };
        responses: {
            /** @description The key and its secret. */
            201: {
                headers: {
                    /** @description Path of the new key. */
                    Location: string;
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewKey"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    getKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    setKeyPlan: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "plan": "enterprise",
                 *       "perMinute": 5000,
                 *       "perDay": 1000000
                 *     }
                 */
                "application/json": {
                    /**
                     * @description free, pro, business, or enterprise (with perMinute and perDay).
                     * @enum {string}
                     */
                    plan: "free" | "pro" | "business" | "enterprise";
                    /** @description Enterprise only, and then required: requests per minute. */
                    perMinute?: number;
                    /** @description Enterprise only, and then required: requests per day. */
                    perDay?: number;
                };
            };
        };
        responses: {
            /** @description The key with its new limits. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_changed`: Key management: other changes of the key kept racing it. `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    setKeyScopes: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "scopes": "pets:read"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description What the key may do from now on, a comma list: `pets:read`, `pets:write`.
                     * @example pets:read,pets:write
                     */
                    scopes: string;
                };
            };
        };
        responses: {
            /** @description The key with its new scopes. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_changed`: Key management: other changes of the key kept racing it. `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    setKeyExpiry: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "expiresAt": "2027-01-31T00:00:00Z"
                 *     }
                 */
                "application/json": {
                    /** @description RFC 3339, or `never` to remove the expiry. */
                    expiresAt: string;
                };
            };
        };
        responses: {
            /** @description The key with its new expiry. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_changed`: Key management: other changes of the key kept racing it. `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    rollKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "graceSeconds": 3600
                 *     }
                 */
                "application/json": {
                    /** @description How long the previous secret keeps working; default 86400 (24 h), 0 at once. */
                    graceSeconds?: number;
                };
            };
        };
        responses: {
            /** @description The key and its new secret. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NewKey"];
                };
            };
            /** @description `invalid_body`: Not a NewPet: a field is missing, unknown, null or invalid. `invalid_json`: The body is not valid JSON. `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_revoked`: Key management: a new secret for a revoked key. `key_changed`: Key management: other changes of the key kept racing it. `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `payload_too_large`: The body is over 16 KiB. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unsupported_media_type`: The body is not application/json (UTF-8). */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    revokeKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key as it is now. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    unbanKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Retry safely: the same key and body within 24 hours return the first response. */
                "idempotency-key"?: string;
            };
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key as it is now. */
            200: {
                headers: {
                    /** @description `true` when this is the stored response of an earlier request with the same Idempotency-Key. */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Key"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_in_use`: A request with the same Idempotency-Key is still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `idempotency_key_reused`: The Idempotency-Key was used before with a different body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    getKeyUsage: {
        parameters: {
            query?: {
                days?: number;
            };
            header?: never;
            path: {
                /** @description The key id, key_... */
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Admitted and refused requests per day, the last `days` days. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `key_not_found`: Key management: no API key has that id. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
    listAudit: {
        parameters: {
            query?: {
                keyId?: string;
                /** @description RFC 3339. */
                since?: string;
                limit?: number;
                /** @description `asc` (the default): oldest first; `desc`: newest first. */
                order?: "asc" | "desc";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Audit entries. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Audit"];
                };
            };
            /** @description `invalid_parameter`: A query or path parameter or the Idempotency-Key is invalid. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unauthorized`: No key, another scheme, a malformed, unknown or revoked key. */
            401: {
                headers: {
                    /** @description RFC 6750 challenge: `Bearer realm="petstore-admin"`, with `error="invalid_token"` when a token was sent. */
                    "WWW-Authenticate": string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `rate_limited`: Over a plan limit, or over the budget without a valid key. */
            429: {
                headers: {
                    /** @description Whole seconds until the address budget for requests without a token resets. */
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
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description `unavailable`: The database or Redis does not answer; wait for Retry-After. */
            503: {
                headers: {
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
