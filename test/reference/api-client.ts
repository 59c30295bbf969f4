// A thin fetch wrapper for the tests: real HTTP against a running service, JSON in and out.
export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export function api(baseUrl: string, key?: string) {
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...(key ? { authorization: `Bearer ${key}` } : {}),
    ...extra,
  });
  const answer = async <T>(res: Response): Promise<ApiAnswer<T>> => {
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  };
  return {
    async get<T = Record<string, unknown>>(path: string): Promise<ApiAnswer<T>> {
      return answer<T>(await fetch(baseUrl + path, { headers: headers() }));
    },
    async post<T = Record<string, unknown>>(path: string, body: unknown): Promise<ApiAnswer<T>> {
      return answer<T>(
        await fetch(baseUrl + path, {
          method: 'POST',
          headers: headers({ 'content-type': 'application/json' }),
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      );
    },
  };
}

/** An event for customer `cus_NNNN` on meter api_calls. */
export function ev(customer: string, quantity: number, idempotencyKey: string, properties?: Record<string, unknown>) {
  return { customer_id: customer, meter: 'api_calls', quantity, idempotency_key: idempotencyKey, ...(properties ? { properties } : {}) };
}
