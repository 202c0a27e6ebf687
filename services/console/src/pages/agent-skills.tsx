import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { del, get, post, query } from '../api.ts';
import { ofLimit } from '../format.ts';
import type { SkillGone, Skills } from '../types.ts';
import { Button, Confirm, ErrorNote, Field, Loading, Meter, Notice, TextArea } from '../ui.tsx';
import { useAgent } from './agents.tsx';

/** The agent's skills as its gateway loads them: installed (custom, and bundled ones switched on), the bundled ones still available, a custom one added. */
export function SkillsPage() {
  const agent = useAgent();
  const queries = useQueryClient();
  const key = ['skills', agent.id];
  const skills = useQuery({ queryKey: key, queryFn: () => get<Skills>(`/api/skills${query({ agentId: agent.id })}`) });
  // The install answer is the list after the change: it becomes the cached list as is.
  const install = useMutation({
    mutationFn: (body: { name: string; skillMd?: string }) =>
      post<Skills>('/api/skills', { agentId: agent.id, ...body }),
    onSuccess: (list) => queries.setQueryData(key, list),
  });
  const [removing, setRemoving] = useState<string | undefined>();
  const remove = useMutation({
    mutationFn: (name: string) => del<SkillGone>('/api/skills', { agentId: agent.id, name }),
    onSuccess: () => {
      setRemoving(undefined);
      return queries.invalidateQueries({ queryKey: key });
    },
  });
  if (skills.isPending) return <Loading what="the agent's skills" />;
  if (skills.isError)
    return (
      <section className="card">
        <h2>Skills</h2>
        <ErrorNote error={skills.error} />
      </section>
    );
  const { installed, available, limit } = skills.data;
  const used = ofLimit(installed.length, limit);
  return (
    <>
      <section className="card" aria-labelledby="installed-skills">
        <h2 id="installed-skills">Installed skills</h2>
        <Meter label="Skills installed, of your plan's limit" share={used.share} text={used.text} />
        {installed.length === 0 ? (
          <p className="muted">No skills installed: switch on a bundled one below, or add your own.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Skill</th>
                  <th scope="col">State</th>
                  <th scope="col">From</th>
                  <th scope="col">What it does</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {installed.map((skill) => (
                  <tr key={skill.name}>
                    <td>
                      <code>{skill.name}</code>
                    </td>
                    <td>{skill.enabled ? 'Enabled' : 'Disabled'}</td>
                    <td>
                      {skill.source === 'openclaw-bundled'
                        ? 'Bundled'
                        : skill.source === 'openclaw-workspace'
                          ? 'Custom'
                          : skill.source}
                    </td>
                    <td>{skill.description}</td>
                    <td>
                      <Button
                        className="button danger"
                        aria-label={`Remove the skill ${skill.name}`}
                        onClick={() => setRemoving(skill.name)}
                      >
                        Remove
                      </Button>
                      {removing === skill.name && (
                        <Confirm
                          question={`Remove the skill ${skill.name}?${skill.source === 'openclaw-workspace' ? ' Its SKILL.md is deleted.' : ''}`}
                          confirmLabel="Remove skill"
                          busy={remove.isPending}
                          onConfirm={() => remove.mutate(skill.name)}
                          onCancel={() => setRemoving(undefined)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ErrorNote error={remove.error} />
        {remove.isSuccess && <Notice>Removed {remove.data.name}.</Notice>}
      </section>
      <section className="card" aria-labelledby="available-skills">
        <h2 id="available-skills">Bundled skills</h2>
        <p className="muted">
          Skills that come with the agent's OpenClaw; installing one switches it on without a restart.
        </p>
        <ErrorNote error={install.isError && install.variables?.skillMd === undefined ? install.error : undefined} />
        {available.length === 0 ? (
          <p className="muted">Every bundled skill is installed.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Skill</th>
                  <th scope="col">What it does</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {available.map((skill) => (
                  <tr key={skill.name}>
                    <td>
                      <code>{skill.name}</code>
                    </td>
                    <td>{skill.description}</td>
                    <td>
                      <Button
                        className="button secondary"
                        aria-label={`Install the skill ${skill.name}`}
                        busy={install.isPending && install.variables?.name === skill.name}
                        busyLabel="Installing…"
                        disabled={install.isPending}
                        onClick={() => install.mutate({ name: skill.name })}
                      >
                        Install
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <CustomSkill
        busy={install.isPending && install.variables?.skillMd !== undefined}
        error={install.isError && install.variables?.skillMd !== undefined ? install.error : undefined}
        onAdd={(name, skillMd) => install.mutate({ name, skillMd })}
        added={install.isSuccess && install.variables?.skillMd !== undefined ? install.variables.name : undefined}
      />
    </>
  );
}

function CustomSkill({
  busy,
  error,
  added,
  onAdd,
}: {
  busy: boolean;
  error: unknown;
  added: string | undefined;
  onAdd: (name: string, skillMd: string) => void;
}) {
  const [name, setName] = useState('');
  const [skillMd, setSkillMd] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onAdd(name, skillMd);
  };
  return (
    <section className="card" aria-labelledby="custom-skill">
      <h2 id="custom-skill">Add your own skill</h2>
      <form onSubmit={submit} className="stack">
        <Field
          label="Skill name"
          required
          pattern="[a-z0-9\-]{1,64}"
          maxLength={64}
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="Lower-case letters, digits and dashes; the same name as in the SKILL.md."
        />
        <TextArea
          label="SKILL.md"
          required
          rows={10}
          spellCheck={false}
          value={skillMd}
          onChange={(e) => setSkillMd(e.target.value)}
          hint="Starts with a frontmatter block: --- then name: <the skill name>, description: <what it does>, then ---; the instructions follow."
        />
        <ErrorNote error={error} />
        {added && !busy && !error && <Notice>Added {added}.</Notice>}
        <Button type="submit" busy={busy} busyLabel="Adding…">
          Add skill
        </Button>
      </form>
    </section>
  );
}
