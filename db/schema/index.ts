export * from "./enums";
export * from "./tenancy";
export * from "./tasks";
export * from "./audit";
export * from "./settings";
export * from "./maps";
export * from "./access";
export * from "./gate";
