import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** The read-only role of the demo ERP: SELECT on every table except `customers`. */
export const demoErpReaderRole = 'erp_reader';

/**
 * The demo ERP's schema and data: vendors (with near-duplicate names, an apostrophe, an inactive
 * vendor and a literal `%`), customers, parts and purchase orders (PO-1001… and PO-10010, which
 * must never be found by PO-1001).
 */
export const demoErpSeedSql = `
create table vendors (
  vendor_id integer primary key,
  vendor_name text not null,
  city text,
  contact_person text,
  telephone_number text,
  email text,
  status text not null default 'active' check (status in ('active', 'inactive'))
);

insert into vendors (vendor_id, vendor_name, city, contact_person, telephone_number, email, status) values
  (42, 'Parts for Truck Inc', 'Calgary', 'Mira Patel', '555-0100', 'sales@partsfortruck.example', 'active'),
  (77, 'Parts 4 Trucks Incorporated', 'Edmonton', 'Dale Whitford', '555-0177', 'orders@parts4trucks.example', 'active'),
  (103, 'Truck Parts Depot', 'Red Deer', 'Sonia Alvarez', '555-0103', 'depot@truckpartsdepot.example', 'active'),
  (104, 'O''Brien Hydraulics', 'Saskatoon', 'Kieran O''Brien', '555-0104', 'kieran@obrienhydraulics.example', 'active'),
  (105, 'Prairie Fasteners Ltd', 'Regina', 'Hannah Kowalski', '555-0105', 'hannah@prairiefasteners.example', 'active'),
  (106, 'Northern Bearing Supply', 'Winnipeg', 'Louis Desrosiers', '555-0106', 'louis@northernbearing.example', 'active'),
  (107, 'Westcoast Filtration Co', 'Vancouver', 'Grace Nakamura', '555-0107', 'grace@westcoastfiltration.example', 'active'),
  (108, 'Summit Brake Systems', 'Kelowna', 'Ravi Sandhu', '555-0108', 'ravi@summitbrake.example', 'active'),
  (109, 'Great Plains Electrical', 'Lethbridge', 'Tessa Braun', '555-0109', 'tessa@greatplainselectrical.example', 'active'),
  (110, 'Rocky Mountain Tire & Wheel', 'Canmore', 'Owen MacLeod', '555-0110', 'owen@rockymountaintire.example', 'active'),
  (111, 'Maple Leaf Lubricants', 'Toronto', 'Amélie Gagnon', '555-0111', 'amelie@mapleleaflube.example', 'active'),
  (112, 'Chinook Welding Supply', 'Calgary', 'Brett Lindqvist', '555-0112', 'brett@chinookwelding.example', 'inactive'),
  (113, 'Boreal Steel & Fabrication', 'Fort McMurray', 'Nadia Haddad', '555-0113', 'nadia@borealsteel.example', 'active'),
  (114, '50% Off Surplus Ltd', 'Edmonton', 'Gus Petrakis', '555-0114', 'gus@50offsurplus.example', 'active'),
  (115, 'Harbour Marine Diesel', 'Halifax', 'Siobhan Murphy', '555-0115', 'siobhan@harbourmarine.example', 'active');

create table customers (
  customer_id integer primary key,
  customer_name text not null,
  city text,
  contact_person text,
  telephone_number text,
  email text
);

insert into customers (customer_id, customer_name, city, contact_person, telephone_number, email) values
  (501, 'Foothills Freight Lines', 'Calgary', 'Jordan Reyes', '555-0501', 'fleet@foothillsfreight.example'),
  (502, 'Aurora Logistics', 'Yellowknife', 'Mei Chen', '555-0502', 'mei@auroralogistics.example'),
  (503, 'Bow River Excavating', 'Cochrane', 'Pat Doucette', '555-0503', 'pat@bowriverex.example'),
  (504, 'Cascade Municipal Transit', 'Kamloops', 'Irene Vasquez', '555-0504', 'irene@cascadetransit.example'),
  (505, 'Peace Country Agri Co-op', 'Grande Prairie', 'Walter Friesen', '555-0505', 'walter@peaceagri.example'),
  (506, 'Lakeshore Paving', 'Kenora', 'Dana Beaulieu', '555-0506', 'dana@lakeshorepaving.example'),
  (507, 'Kootenay Forestry Ltd', 'Nelson', 'Sam Okafor', '555-0507', 'sam@kootenayforestry.example'),
  (508, 'Midway Towing & Recovery', 'Brandon', 'Lori Tremblay', '555-0508', 'lori@midwaytowing.example'),
  (509, 'Sunrise School Bus Co', 'Airdrie', 'Ken Yamamoto', '555-0509', 'ken@sunrisebus.example'),
  (510, 'Tundra Haulage', 'Whitehorse', 'Ada Pedersen', '555-0510', 'ada@tundrahaulage.example');

create table parts (
  part_id integer primary key,
  part_number text not null unique,
  part_description text not null,
  category text,
  unit_price numeric(10, 2),
  vendor_id integer references vendors (vendor_id)
);

insert into parts (part_id, part_number, part_description, category, unit_price, vendor_id) values
  (1, 'BRK-2201', 'Ceramic brake pads, front axle', 'brakes', 84.50, 108),
  (2, 'BRK-2202', 'Ceramic brake pads, rear axle', 'brakes', 79.00, 108),
  (3, 'BRK-3100', 'Air brake chamber, type 30', 'brakes', 112.75, 42),
  (4, 'FLT-0410', 'Oil filter, heavy duty spin-on', 'filters', 18.20, 107),
  (5, 'FLT-0520', 'Fuel water separator filter', 'filters', 26.95, 107),
  (6, 'FLT-0630', 'Cabin air filter', 'filters', 14.40, 107),
  (7, 'BRG-1105', 'Wheel hub bearing assembly', 'bearings', 146.00, 106),
  (8, 'BRG-1120', 'Tapered roller bearing set', 'bearings', 58.30, 106),
  (9, 'HYD-7001', 'Hydraulic hose, 1/2 inch, 10 ft', 'hydraulics', 42.00, 104),
  (10, 'HYD-7015', 'Hydraulic cylinder seal kit', 'hydraulics', 36.80, 104),
  (11, 'ELC-3300', 'LED tail light assembly', 'electrical', 67.25, 109),
  (12, 'ELC-3310', 'Alternator, 160 amp', 'electrical', 389.00, 109),
  (13, 'FST-0050', 'Grade 8 hex bolt, 1/2 x 3 inch (box of 50)', 'fasteners', 31.60, 105),
  (14, 'TIR-2275', 'Drive tire 11R22.5', 'tires', 455.00, 110),
  (15, 'LUB-0900', 'Synthetic gear oil 75W-90, 20 L', 'lubricants', 172.40, 111);

create table purchase_orders (
  purchase_order_id integer primary key,
  purchase_number text not null unique,
  vendor_id integer not null references vendors (vendor_id),
  status text not null check (status in ('open', 'received', 'closed', 'cancelled')),
  order_date date not null,
  total_amount numeric(12, 2) not null
);

insert into purchase_orders (purchase_order_id, purchase_number, vendor_id, status, order_date, total_amount) values
  (1, 'PO-1001', 42, 'open', '2025-01-06', 1690.00),
  (2, 'PO-1002', 77, 'received', '2025-01-09', 845.50),
  (3, 'PO-1003', 104, 'open', '2025-01-14', 420.00),
  (4, 'PO-1004', 107, 'closed', '2025-01-20', 589.60),
  (5, 'PO-1005', 108, 'open', '2025-02-03', 1637.50),
  (6, 'PO-1006', 106, 'received', '2025-02-11', 2044.00),
  (7, 'PO-1007', 109, 'cancelled', '2025-02-18', 389.00),
  (8, 'PO-1008', 110, 'open', '2025-03-02', 3640.00),
  (9, 'PO-1009', 111, 'closed', '2025-03-10', 862.00),
  (10, 'PO-10010', 103, 'open', '2025-03-17', 1275.25),
  (11, 'PO-1011', 105, 'received', '2025-03-24', 632.00),
  (12, 'PO-1012', 42, 'closed', '2025-04-01', 225.50);

create role ${demoErpReaderRole} nologin;
grant usage on schema public to ${demoErpReaderRole};
grant select on vendors, parts, purchase_orders to ${demoErpReaderRole};
`;

/** Options of {@link createDemoErp}. */
export interface DemoErpOptions {
  /** Load and create `pg_trgm` so fuzzy matches are ranked by similarity (default true). */
  trigram?: boolean;
}

/**
 * An embedded ERP database (PostgreSQL in WebAssembly, in memory) seeded with demo vendors,
 * customers, parts and purchase orders, plus the read-only role {@link demoErpReaderRole}. Starting
 * one takes a few seconds; share it. Close it with `close()`.
 */
export async function createDemoErp(options: DemoErpOptions = {}): Promise<PGlite> {
  const trigram = options.trigram ?? true;
  const db = await PGlite.create(trigram ? { extensions: { pg_trgm } } : {});
  try {
    await db.exec(
      `${trigram ? 'create extension if not exists pg_trgm;\n' : ''}${demoErpSeedSql}${
        trigram ? 'create index vendors_name_trgm on vendors using gin (vendor_name gin_trgm_ops);\n' : ''
      }`,
    );
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
