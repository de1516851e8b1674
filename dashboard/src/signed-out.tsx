/**
 * What the pages shown outside the signed-in shell share — signing in (`screens/sign-in.tsx`) and the pages an
 * e-mailed link opens (`screens/person-link.tsx`): the frame (the brand and the language switch over a narrow
 * card with its title), the card's one form (its hint, its fields, its refusal, its submit button) and that
 * form's call (its progress for `disabled`, its refusal until the next try).
 */
import type { ComponentChildren, JSX } from "preact";
import { type Action, useAction } from "./components.tsx";

/** The frame of a signed-out page: the top bar (brand, language switch) and the card titled `title`. */
export function SignedOutPage({ title, languageSwitch, children }: { title: string; languageSwitch: JSX.Element; children: ComponentChildren }) {
  return (
    <div class="sign-in">
      <header class="topbar">
        <div class="topbar-row">
          <span class="brand">Passerelle</span>
          <span class="spacer" />
          {languageSwitch}
        </div>
      </header>
      <main id="main" class="sign-in-card">
        <h1>{title}</h1>
        {children}
      </main>
    </div>
  );
}

/** The card's form: named `label`, its hint first, then its fields, the refusal when there is one, and the submit button. */
export function CardForm({
  label,
  hint,
  onSubmit,
  refusal,
  busy,
  submitLabel,
  children,
}: {
  label: string;
  hint: string;
  onSubmit: (event: SubmitEvent) => void;
  refusal: ComponentChildren;
  busy: boolean;
  submitLabel: string;
  children: ComponentChildren;
}) {
  return (
    <form onSubmit={onSubmit} class="stack" aria-label={label}>
      <p class="hint">{hint}</p>
      {children}
      {refusal}
      <button type="submit" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

/** A card form's call: `run` gets the form's fields; `busy` and `error` as `useAction` keeps them. */
export function useCardForm(run: (form: FormData) => Promise<unknown>): Pick<Action, "busy" | "error"> & { submit: (event: SubmitEvent) => void } {
  const action = useAction();
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    void action.run(() => run(form));
  };
  return { busy: action.busy, error: action.error, submit };
}
