// The node floor's door: the server, its bridge, channels and the file store (Node only).
export { fileStore } from './file-store.ts';
export { slackChannel } from './slack.ts';
export type { SlackChannelOptions } from './slack.ts';
export { discordChannel } from './discord.ts';
export type { DiscordChannelOptions } from './discord.ts';
export type { Channel, ChannelContext } from './channel.ts';
export { serve, closeOnSignals } from './server.ts';
export type { ServeOptions, AgentServer } from './server.ts';
export { toNodeListener } from './listener.ts';
export type { NodeListener, NodeListenerOptions, WebHandler } from './listener.ts';
