/**
 * The size limit of a request body (decisions.md: over 16 KiB is 413), named once: the body
 * parser enforces it, the error table and the 413's message state it.
 */
export const BODY_LIMIT_KIB = 16;
export const BODY_LIMIT_BYTES = BODY_LIMIT_KIB * 1024;
