// Package agents is the read model of agents: what each node offers
// (architecture, capacity slots, devices), whether it is reachable, and what
// is allocated on it, kept up to date by a projections.Projector from the
// events of the agent streams (agent.*). ListAgents and GetAgent serve the
// HTTP layer.
//
// Occupancy is never counted up and down: the table agent_allocations holds
// one row per allocation (agent.allocated inserts it, agent.released
// deletes it), and after each change the agent's occupied slots, device
// shares and allocation count are summed again from those rows, so they
// cannot drift from the events, and applying an event again changes
// nothing.
//
// "Last seen" is the time of the agent's last registration or rejoin, the
// announcements recorded as events; heartbeats are not events.
package agents
