export { fileStore } from './file-store.ts';
export { slackChannel } from './slack.ts';
export type { SlackChannelOptions } from './slack.ts';
export { discordChannel } from './discord.ts';
export type { DiscordChannelOptions } from './discord.ts';
export type { Channel, ChannelContext } from './channel.ts';
export { serve, closeOnSignals } from './server.ts';
export type { ServeOptions, AgentServer } from './server.ts';
