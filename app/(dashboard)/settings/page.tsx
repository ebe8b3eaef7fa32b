import { redirect } from "next/navigation";
import { SETTINGS_SECTIONS } from "./_components/sections";

/** `/settings` has no page of its own: it opens the first section. */
export default function SettingsPage(): never {
  redirect(SETTINGS_SECTIONS[0].href);
}
