import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PROFILE,
  cacheDepth,
  profileRung,
  resolveProfile,
  validateProfile,
} from '../src/index.js';

const KiB = 1024;
const MiB = 1024 * KiB;

describe('profile rungs', () => {
  it('defaults to rung 3', () => {
    expect(DEFAULT_PROFILE).toBe(3);
    expect(profileRung(DEFAULT_PROFILE).cacheBudget).toBe(640 * KiB);
  });

  it('matches the table at both ends and the default', () => {
    expect(profileRung(1)).toEqual({
      rung: 1, cacheFloor: 0, cacheBudget: 64 * KiB, decommitSpan: 1, sweepThreshold: 4, largeRetention: 0,
    });
    expect(profileRung(3)).toEqual({
      rung: 3, cacheFloor: 8, cacheBudget: 640 * KiB, decommitSpan: 128, sweepThreshold: 32, largeRetention: 16 * MiB,
    });
    expect(profileRung(10)).toEqual({
      rung: 10, cacheFloor: 128, cacheBudget: 2 * MiB, decommitSpan: 512, sweepThreshold: 512, largeRetention: 128 * MiB,
    });
  });

  it('keeps more memory as the rung rises: floor rises, no column falls', () => {
    for (let r = 2; r <= 10; r++) {
      const lo = profileRung(r - 1);
      const hi = profileRung(r);
      expect(hi.cacheFloor).toBeGreaterThan(lo.cacheFloor);
      expect(hi.cacheBudget).toBeGreaterThanOrEqual(lo.cacheBudget);
      expect(hi.decommitSpan).toBeGreaterThanOrEqual(lo.decommitSpan);
      expect(hi.sweepThreshold).toBeGreaterThanOrEqual(lo.sweepThreshold);
      expect(hi.largeRetention).toBeGreaterThanOrEqual(lo.largeRetention);
    }
  });
});

describe('cache depth', () => {
  it('at rung 3 is 512 x6, then halves down to the floor of 8', () => {
    const depths = Array.from({ length: 16 }, (_, i) => cacheDepth(3, i));
    expect(depths).toEqual([512, 512, 512, 512, 512, 512, 320, 160, 80, 40, 20, 10, 8, 8, 8, 8]);
  });

  it('at rung 1 follows the 64 KiB budget with no floor', () => {
    const depths = Array.from({ length: 16 }, (_, i) => cacheDepth(1, i));
    expect(depths).toEqual([512, 512, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1, 0, 0, 0, 0]);
    expect(cacheDepth(1, 9)).toBe(4); // the 16 KiB class
  });

  it('at rung 10 is 512 for 32 B and never below the floor of 128', () => {
    const depths = Array.from({ length: 16 }, (_, i) => cacheDepth(10, i));
    expect(depths[0]).toBe(512);
    expect(Math.min(...depths)).toBe(128);
    expect(depths).toEqual([512, 512, 512, 512, 512, 512, 512, 512, 256, 128, 128, 128, 128, 128, 128, 128]);
  });

  it('rejects a class outside 0..15', () => {
    expect(() => cacheDepth(3, 16)).toThrow(RangeError);
    expect(() => cacheDepth(3, -1)).toThrow(RangeError);
    expect(() => cacheDepth(3, 1.5)).toThrow(RangeError);
  });
});

describe('scaling for smaller arenas', () => {
  it('leaves a 512-unit arena as the table says', () => {
    const p = resolveProfile(3);
    expect(p.decommitSpan).toBe(128);
    expect(p.sweepThreshold).toBe(32);
    expect(p.cacheDepth[9]).toBe(40);
  });

  it('scales span and threshold by units/512 for a 128-unit (2 MiB) arena, keeping at least 1', () => {
    expect(resolveProfile(3, 128).decommitSpan).toBe(32);
    expect(resolveProfile(3, 128).sweepThreshold).toBe(8);
    expect(resolveProfile(1, 128).decommitSpan).toBe(1);
    expect(resolveProfile(1, 128).sweepThreshold).toBe(1);
    expect(resolveProfile(10, 128).decommitSpan).toBe(128);
  });

  it('rejects an arena size outside 1..512 units', () => {
    expect(() => resolveProfile(3, 0)).toThrow(RangeError);
    expect(() => resolveProfile(3, 513)).toThrow(RangeError);
  });
});

describe('validation', () => {
  it.each([0, 11, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '3', null, undefined, 3n])(
    'rejects %s with a RangeError that names the range',
    (bad) => {
      expect(() => validateProfile(bad)).toThrow(RangeError);
      expect(() => validateProfile(bad)).toThrow(/must be between 1 and 10/);
      expect(() => profileRung(bad as number)).toThrow(/must be between 1 and 10/);
    },
  );

  it('accepts every integer rung', () => {
    for (let r = 1; r <= 10; r++) expect(validateProfile(r)).toBe(r);
  });
});
