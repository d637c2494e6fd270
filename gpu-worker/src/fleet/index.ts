export { FleetMember, type FleetMemberOptions } from './fleet-member.ts';
