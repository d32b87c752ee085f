// Holds the implementation (lib/retrycore.ts) to the public declarations
// (lib/api.d.ts, shipped as index.d.ts by both packages): tsc fails the build
// when they disagree. tests/js/conforms.test.cjs proves it does.
import type * as api from './api';
import type * as impl from './retrycore';
import type * as G from './generated';

/** Compiles only when `A` is assignable to `B`. */
type Is<A extends B, B> = A;
/** Compiles only when `T` is `never` (the error names what is left). */
type None<T extends never> = T;
/** The public names of `A` that `B` lacks (internal ones start with `_`). */
type Undeclared<A, B> = Exclude<keyof A, keyof B | `_${string}` | 'setBackend' | 'prototype'>;

// Every declared function, constant and class exists with an assignable type
// (a class: its constructor, statics and instance type).
export type Values = Is<typeof impl, typeof api>;
// Every public runtime export is declared.
export type Exports = None<Undeclared<typeof impl, typeof api>>;
// The kind lists are the generated ones, exactly.
type Kinds = 'CATEGORIES' | 'PROFILES' | 'BACKOFF_KINDS' | 'JITTERS' | 'BREAKER_KINDS' | 'BUDGET_KINDS' | 'GIVE_UP_REASONS' | 'REJECT_REASONS';
export type SameKinds = None<{ [K in Kinds]: [(typeof api)[K], (typeof G)[K]] extends [(typeof G)[K], (typeof api)[K]] ? never : K }[Kinds]>;

// Each class's public instance members and statics are declared. (The other
// direction holds for the functions: each answers exactly its declared type.
// It cannot hold for a class, whose #private state the declaration hides.)
type Classes = 'RetrycoreError' | 'RetryError' | 'CircuitOpenError' | 'BudgetExhaustedError' | 'IdempotencyError' | 'Rng' | 'CircuitBreaker' | 'Budget' | 'Session' | 'RetryPolicy' | 'DeadLetter' | 'Limiter' | 'LimiterRejectedError' | 'CompensationRun' | 'DeadLetterReplay';
export type Members = None<{ [C in Classes]: Undeclared<(typeof impl)[C]['prototype'], (typeof api)[C]['prototype']> | Undeclared<(typeof impl)[C], (typeof api)[C]> }[Classes]>;
// Every declared class is in that list.
export type AllClasses = None<Exclude<{ [K in keyof typeof api]: (typeof api)[K] extends { prototype: infer P } ? (unknown extends P ? never : K) : never }[keyof typeof api], Classes>>;

type Fns = { [K in keyof typeof api]: (typeof api)[K] extends (...a: never[]) => unknown ? K : never }[keyof typeof api];
export type Returns = None<{ [K in Fns & keyof typeof impl]: ReturnType<(typeof api)[K]> extends ReturnType<(typeof impl)[K]> ? never : K }[Fns & keyof typeof impl]>;
