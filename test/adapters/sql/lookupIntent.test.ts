import { describe, expect, it } from 'vitest';
import { lookupIntent } from '../../../src/actors/tools/lookupIntent.js';

describe('recognising plain lookup requests (offline model)', () => {
  it.each([
    ['phone number for Parts for Truck Inc', { entity_type: 'vendor', entity_name: 'Parts for Truck Inc' }],
    [
      'What is the phone number for Parts for Truck Inc?',
      { entity_type: 'vendor', entity_name: 'Parts for Truck Inc' },
    ],
    ['phone number for parts for truck inc', { entity_type: 'vendor', entity_name: 'parts for truck inc' }],
    ['status of PO-1001', { entity_type: 'purchase_order', order_number: 'PO-1001' }],
    ['where is po 1002?', { entity_type: 'purchase_order', order_number: 'PO-1002' }],
    ['email of customer Northwind Traders', { entity_type: 'customer', entity_name: 'Northwind Traders' }],
    ['find vendor Parts', { entity_type: 'vendor', entity_name: 'Parts' }],
    ["look up O'Brien Hydraulics please", { entity_type: 'vendor', entity_name: "O'Brien Hydraulics" }],
  ])('%j', (text, intent) => {
    expect(lookupIntent(text)).toEqual(intent);
  });

  it.each([
    'hello everyone',
    'Nova, what comet is that?',
    'I love sourdough',
    'tell me more about the stars',
  ])('ordinary chat is not a lookup: %j', (text) => {
    expect(lookupIntent(text)).toBeUndefined();
  });
});
