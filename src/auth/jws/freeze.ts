// SPDX-License-Identifier: MIT
/** `Object.freeze`, under a name a minifier can shorten: the layer freezes every value it hands out. */
export const freeze: typeof Object.freeze = Object.freeze;
