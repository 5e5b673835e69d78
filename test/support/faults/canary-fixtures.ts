import { randomInt } from 'node:crypto';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import type { Identity } from './local-prescriptions.js';
import { identityNeedles, phoneNeedles, type Needle } from './leaks.js';

type Prescription = ReturnType<typeof samplePrescription>;

const letters = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + randomInt(26))).join('');
const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join('');

/** A canary patient: every PHI field unique to this run and unlikely anywhere else. */
export interface CanaryPatient {
  prescription: Prescription;
  identity: Identity;
  needles: Needle[];
}

/**
 * A valid prescription whose patient carries fake but distinctive PHI: names
 * "Zqxcanary…", a DOB in the 1920s, a NANP phone, a street, an email. With
 * `rejected` the prescriber has the patient's names (the sandbox's rejection path).
 */
export function canaryPatient(i: number, options: { rejected?: boolean } = {}): CanaryPatient {
  const base = samplePrescription(900_000 + i, { prefix: 'canary' });
  const first = `Zqxcanary${letters(8)}`;
  const middle = `Mqcanary${letters(6)}`;
  const last = `Vykcanary${letters(8)}`;
  const dob = `19${20 + randomInt(10)}-0${1 + randomInt(9)}-${10 + randomInt(18)}`;
  const phone = `${2 + randomInt(8)}${digits(2)}-${2 + randomInt(8)}${digits(2)}-${digits(4)}`;
  const street = `${100 + randomInt(800)} Canarystreet${letters(6)} Ave`;
  const email = `zqx${letters(10)}@example.com`;
  const names = { first_name: first, middle_name: middle, last_name: last };
  const prescription: Prescription = {
    ...base,
    external_id: `canary-${i}-${letters(4)}`,
    patient: { ...base.patient, ...names, dob, primary_phone: phone, email, address: { ...base.patient.address, address1: street } },
    prescriber: options.rejected ? { ...base.prescriber, ...names } : base.prescriber,
  };
  const identity: Identity = {
    patient_first_name: first,
    patient_last_name: last,
    patient_state: prescription.patient.address.state,
    patient_dob: dob,
    erx_message_id: null,
    prescriber_npi: prescription.prescriber.npi,
    written_date: prescription.written_date,
    drug_ndc: prescription.medication.ndc,
  };
  const [year, month, day] = dob.split('-');
  const needles: Needle[] = [
    ...identityNeedles([identity]),
    { label: 'patient middle name', value: middle },
    { label: 'patient dob (digits)', value: `${year}${month}${day}` },
    { label: 'patient dob (US format)', value: `${month}/${day}/${year}` },
    ...phoneNeedles(phone),
    { label: 'patient street', value: street },
    { label: 'patient email', value: email },
  ];
  return { prescription, identity, needles };
}
